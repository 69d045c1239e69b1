import { Body, Controller, Get, HttpCode, Inject, Logger, Post, Query, Res } from '@nestjs/common';
import type { Response } from 'express';
import {
  CollectingOutputChannel,
  DialogueError,
  type JsonObject,
  MessageHandler,
  OutputChannel,
  requireConversationId,
  requireUserText,
} from 'src/core';
import { Public } from 'src/platform/auth/public.decorator';
import { APP_CONFIG, type AppConfig } from 'src/platform/config/app-config';

/**
 * Rasa's `rest` channel (no auth): `POST /webhooks/rest/webhook` with `{sender, message,
 * metadata?, input_channel?}` answers the bot's messages as a list of
 * `{recipient_id, text?, image?, buttons?, …}`; `GET /webhooks/rest/` is its health check.
 * Unlike Rasa's RestInput, which answers 200 whatever happened, a turn that failed answers a
 * failure body (503 with Retry-After while the database is unreachable): the turn was not
 * stored, and a 200 would tell the client that it was.
 */
@Public()
@Controller('webhooks/rest')
export class RestWebhookController {
  private readonly logger = new Logger(RestWebhookController.name);

  constructor(
    private readonly handler: MessageHandler,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Get()
  health(): { status: string } {
    return { status: 'ok' };
  }

  @Post('webhook')
  @HttpCode(200)
  async webhook(
    @Body() body: unknown,
    @Query('stream') stream: unknown,
    @Res() res: Response,
  ): Promise<void> {
    const input = restInput(body, this.config.http.maxTextLength);
    if (String(stream).toLowerCase() === 'true') {
      // `?stream=true`: each message is written as one JSON line as soon as it is sent.
      // Headers go out with the first message, which is sent only after the turn is stored:
      // a turn that fails still gets its failure status.
      res.status(200).type('text/event-stream');
      const streaming = new StreamingOutputChannel(res);
      await this.handle(input, streaming);
      res.end();
      return;
    }
    const output = new CollectingOutputChannel();
    await this.handle(input, output);
    // Written directly: the hottest route skips express's res.json/res.send machinery
    // (content-type negotiation, freshness and ETag checks) for the same bytes and headers.
    const json = JSON.stringify(output.messages);
    res.writeHead(200, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(json),
    });
    res.end(json);
  }

  private async handle(input: RestInput, output: OutputChannel): Promise<void> {
    try {
      await this.handler.handleMessage({
        text: input.message,
        senderId: input.sender,
        inputChannel: input.inputChannel,
        output,
        metadata: input.metadata,
      });
    } catch (error) {
      this.logger.warn(
        { sender: input.sender, error: (error as Error).message },
        'the user message could not be handled; the turn was not stored',
      );
      throw error;
    }
  }
}

/** Writes each message as a JSON line to the response (the REST channel's stream mode). */
class StreamingOutputChannel extends CollectingOutputChannel {
  constructor(private readonly res: Response) {
    super();
  }

  override async send(recipientId: string, message: JsonObject): Promise<void> {
    await super.send(recipientId, message);
    const collected = this.messages.pop();
    this.res.write(`${JSON.stringify(collected)}\n`);
  }
}

interface RestInput {
  readonly sender: string;
  readonly message: string;
  readonly metadata: JsonObject | null;
  readonly inputChannel: string;
}

function bad(parameter: string, message: string): DialogueError {
  return new DialogueError('REQUEST.INVALID_PARAMETER', message, { parameter, in: 'body' });
}

/**
 * Validates the webhook body: `sender` (a conversation id: see conversation-id.ts) and
 * `message` (at most `maxTextLength` characters) are required.
 */
export function restInput(body: unknown, maxTextLength: number): RestInput {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw bad('body', 'The request body must be a JSON object with "sender" and "message".');
  }
  const b = body as Record<string, unknown>;
  if (b.sender === undefined || b.sender === null || b.sender === '') {
    throw bad('sender', 'The request body needs a "sender" (the conversation id).');
  }
  if (typeof b.sender !== 'string' && typeof b.sender !== 'number') {
    throw bad('sender', '"sender" must be a string.');
  }
  if (typeof b.message !== 'string') {
    throw bad('message', 'The request body needs a "message" (text).');
  }
  if (
    b.metadata !== undefined &&
    b.metadata !== null &&
    (typeof b.metadata !== 'object' || Array.isArray(b.metadata))
  ) {
    throw bad('metadata', '"metadata" must be an object.');
  }
  if (
    b.input_channel !== undefined &&
    b.input_channel !== null &&
    typeof b.input_channel !== 'string'
  ) {
    throw bad('input_channel', '"input_channel" must be a string.');
  }
  return {
    sender: requireConversationId(String(b.sender), 'sender', 'body'),
    message: requireUserText(b.message.trim(), maxTextLength, 'message'),
    metadata: (b.metadata as JsonObject | undefined) ?? null,
    inputChannel: typeof b.input_channel === 'string' ? b.input_channel : 'rest',
  };
}
