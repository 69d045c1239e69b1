import { Logger } from '@nestjs/common';
import type { Request, Response } from 'express';
import {
  type Connector,
  type ConnectorRoute,
  once,
} from 'src/modules/channels/connector/connector';
import { PlatformClient } from 'src/modules/channels/connector/platform-client';
import { type ChannelInput } from 'src/modules/channels/input/channel-input';
import { type IdempotentIngress } from 'src/modules/idempotency';
import { type TwilioSettings } from './twilio-config';
import { formField, type FormParams, verifiedForm } from './twilio-signature';
import { TwilioOutputChannel } from './twilio.output-channel';

/**
 * Rasa's TwilioInput at `POST /webhooks/twilio/webhook`, where Twilio sends an incoming SMS,
 * MMS or WhatsApp message as a form (`From`, `Body`, `MessageSid`, `NumMedia`, `MediaUrl0` …):
 *
 * - `X-Twilio-Signature` must be Twilio's signature of the URL and the form with the auth
 *   token (see `verifiedForm`), else a 401 failure body before any field is used (Rasa's
 *   TwilioInput checks no signature).
 * - The sender is `From` as sent (`+1415…`, or `whatsapp:+1415…` for WhatsApp), the text
 *   `Body` with `¡` read as `@` (some carriers garble `@`, as Rasa notes). A message with no
 *   body but media has the URL of its first media as the text (Parley's; Rasa sends the empty
 *   body). No metadata, as Rasa's sends none.
 * - Answers 204 with an empty body, as Rasa does (Twilio then sends no TwiML reply); the bot's
 *   answers go through the Messages API (TwilioOutputChannel). A request without `From`, or
 *   with neither body nor media (a status callback sent here), is answered 204 with no turn.
 * - A redelivered `MessageSid` replays the first answer instead of a second turn (see `once`).
 */
export class TwilioConnector implements Connector {
  private static readonly log = new Logger('Connector[twilio]');
  readonly name = 'twilio';
  private readonly client: PlatformClient;

  constructor(
    private readonly settings: TwilioSettings,
    private readonly input: ChannelInput,
    private readonly ingress: IdempotentIngress | null = null,
  ) {
    this.client = new PlatformClient({
      name: 'twilio',
      ...settings.http,
    });
  }

  /** Rasa's TwilioInput.get_output_channel: the Messages API. */
  outputChannel(): TwilioOutputChannel {
    return new TwilioOutputChannel(
      this.client,
      this.settings.accountSid,
      this.settings.authToken,
      this.settings.twilioNumber,
    );
  }

  async handle(route: ConnectorRoute, req: Request, res: Response): Promise<boolean> {
    if (route !== 'webhook' || req.method !== 'POST') return false;
    const form = verifiedForm(this.name, this.settings.authToken, this.settings.webhookUrl, req);
    const sender = formField(form, 'From');
    const text = incomingText(form);
    if (sender === null || sender === '' || text === null) {
      TwilioConnector.log.debug('Invalid message: no sender or no body; no turn');
      res.status(204).end();
      return true;
    }
    const scope = { scope: this.name, sender };
    await once(this.ingress, req, res, scope, formField(form, 'MessageSid'), async () => {
      await this.input.handleMessage({
        text,
        senderId: sender,
        inputChannel: this.name,
        output: this.outputChannel(),
        metadata: null,
      });
      res.status(204).end();
    });
    return true;
  }
}

/**
 * The text of an incoming message: `Body` (`¡` read as `@`), or when it is empty the first
 * media URL (`MediaUrl0`) of a message with media; null when there is neither.
 */
export function incomingText(form: FormParams): string | null {
  const body = formField(form, 'Body');
  if (body !== null && body !== '') return body.replaceAll('¡', '@');
  const media = Number(formField(form, 'NumMedia') ?? '0');
  const url = formField(form, 'MediaUrl0');
  if (media > 0 && url !== null && url !== '') return url;
  return null;
}
