import { Controller, Get, HttpCode, Inject, Logger, Post, Query, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { CollectingOutputChannel, MessageHandler, type OutputChannel } from 'src/core';
import { ChannelInput } from 'src/modules/channels/input/channel-input';
import { StreamingOutputChannel } from 'src/modules/channels/input/streaming-output-channel';
import { parseRestWebhookBody, type WebhookInput } from 'src/modules/channels/input/webhook-input';
import { IdempotentIngress } from 'src/modules/idempotency';
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
  private readonly input: ChannelInput;

  constructor(
    handler: MessageHandler,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly ingress: IdempotentIngress,
  ) {
    this.input = new ChannelInput(handler, {
      channel: 'rest',
      log: new Logger(RestWebhookController.name),
    });
  }

  @Get()
  health(): { status: string } {
    return { status: 'ok' };
  }

  @Post('webhook')
  @HttpCode(200)
  async webhook(
    @Req() req: Request,
    @Query('stream') stream: unknown,
    @Res() res: Response,
  ): Promise<void> {
    const input = parseRestWebhookBody(req.body, this.config.http.maxTextLength);
    const scope = { scope: 'rest', sender: input.sender };
    await this.ingress.run(req, res, scope, input.messageId, () => this.answer(input, stream, res));
  }

  private async answer(
    input: Omit<WebhookInput, 'stream'>,
    stream: unknown,
    res: Response,
  ): Promise<void> {
    if (String(stream).toLowerCase() === 'true') {
      // `?stream=true`: each message is written as one JSON line as soon as it is sent.
      res.status(200).type('text/event-stream');
      await this.handle(input, new StreamingOutputChannel(res));
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

  private handle(input: Omit<WebhookInput, 'stream'>, output: OutputChannel): Promise<void> {
    return this.input.handleMessage({
      text: input.message,
      senderId: input.sender,
      inputChannel: input.inputChannel ?? 'rest',
      output,
      metadata: input.metadata,
      messageId: input.messageId,
    });
  }
}
