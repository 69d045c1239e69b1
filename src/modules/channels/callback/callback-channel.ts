import type { Request, Response } from 'express';
import { type ChannelInput } from 'src/modules/channels/input/channel-input';
import { parseWebhookBody } from 'src/modules/channels/input/webhook-input';
import { type IdempotentIngress } from 'src/modules/idempotency';
import { type CallbackEndpoint } from './callback-config';
import { CallbackOutputChannel } from './callback.output-channel';

/**
 * Rasa's CallbackInput: `POST /webhooks/callback/webhook` takes the REST-style body, answers
 * `success` (text/plain) once the turn is stored, and the bot's messages go to the configured
 * URL, one POST each ({@link CallbackOutputChannel}), also for `output_channel=callback`.
 */
export class CallbackChannel {
  constructor(
    private readonly endpoint: CallbackEndpoint,
    private readonly input: ChannelInput,
    private readonly maxTextLength: number,
    private readonly ingress: IdempotentIngress,
  ) {}

  outputChannel(): CallbackOutputChannel {
    return new CallbackOutputChannel(this.endpoint);
  }

  async webhook(req: Request, res: Response): Promise<void> {
    const input = parseWebhookBody(req.body, 'callback', this.maxTextLength);
    const scope = { scope: this.input.channel, sender: input.sender };
    await this.ingress.run(req, res, scope, input.messageId, async () => {
      await this.input.handleMessage({
        text: input.message,
        senderId: input.sender,
        inputChannel: input.inputChannel ?? 'callback',
        output: this.outputChannel(),
        metadata: input.metadata,
        messageId: input.messageId,
      });
      res.status(200).type('text/plain').send('success');
    });
  }
}
