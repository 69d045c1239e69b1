import { Body, Controller, Get, HttpCode, Logger, Post } from '@nestjs/common';
import { CollectingOutputChannel, DialogueError, MessageHandler, type JsonObject } from 'src/core';
import { Public } from 'src/platform/auth/public.decorator';

/**
 * Rasa's `rest` channel (no auth): `POST /webhooks/rest/webhook` with `{sender, message,
 * metadata?, input_channel?}` answers the bot's messages as a list of
 * `{recipient_id, text?, image?, buttons?, …}`; `GET /webhooks/rest/` is its health check. A
 * failure while handling the message is logged and the messages so far are still returned.
 */
@Public()
@Controller('webhooks/rest')
export class RestWebhookController {
  private readonly logger = new Logger(RestWebhookController.name);

  constructor(private readonly handler: MessageHandler) {}

  @Get()
  health(): { status: string } {
    return { status: 'ok' };
  }

  @Post('webhook')
  @HttpCode(200)
  async webhook(@Body() body: unknown): Promise<JsonObject[]> {
    const input = restInput(body);
    const output = new CollectingOutputChannel();
    try {
      await this.handler.handleMessage({
        text: input.message,
        senderId: input.sender,
        inputChannel: input.inputChannel,
        output,
        metadata: input.metadata,
      });
    } catch (error) {
      if (error instanceof DialogueError && error.code === 'LOCK.TIMEOUT') throw error;
      this.logger.error(
        { sender: input.sender, error: (error as Error).message },
        'an exception occurred while handling the user message',
      );
    }
    return output.messages;
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

/** Validates the webhook body: `sender` and `message` are required. */
export function restInput(body: unknown): RestInput {
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
    sender: String(b.sender),
    message: b.message.trim(),
    metadata: (b.metadata as JsonObject | undefined) ?? null,
    inputChannel: typeof b.input_channel === 'string' ? b.input_channel : 'rest',
  };
}
