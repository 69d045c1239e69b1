import { Logger } from '@nestjs/common';
import { pythonStr } from 'src/core/actions/nlg';
import { isJsonObject } from 'src/core/events/json-values';
import { ConnectorOutputChannel } from 'src/modules/channels/connector/connector';
import { type PlatformClient } from 'src/modules/channels/connector/platform-client';

const WHATSAPP = 'whatsapp:';

/**
 * Rasa's TwilioOutput: every part is one call of Twilio's Messages API (`POST
 * /2010-04-01/Accounts/<account_sid>/Messages.json`, form-encoded, HTTP Basic auth with the
 * account SID and auth token) with `To` the sender and `From` the Twilio number. Text is split
 * on blank lines, one SMS each; an image is a message with `MediaUrl` and no body; buttons,
 * quick replies, elements and attachments are Rasa's base text fallbacks. Custom JSON is the
 * message's parameters as given (Rasa's snake_case keys, `media_url` …, become Twilio's
 * `MediaUrl` …), with `To` the sender, an empty `Body` unless it has a `media_url`, and `From`
 * the Twilio number unless it names a `messaging_service_sid`.
 *
 * Parley's: to a WhatsApp sender (`whatsapp:+…`) the answers go from `whatsapp:<twilio_number>`
 * when the number is configured without the prefix (Rasa sends it as configured, which Twilio
 * refuses); `{custom: {hangup: true}}` (action_hangup, for voice channels) sends nothing.
 */
export class TwilioOutputChannel extends ConnectorOutputChannel {
  private static readonly log = new Logger('Connector[twilio]');
  readonly name = 'twilio';

  constructor(
    private readonly client: PlatformClient,
    private readonly accountSid: string,
    private readonly authToken: string,
    private readonly twilioNumber: string,
  ) {
    super();
  }

  /** The Twilio number answers to `recipientId` are sent from. */
  from(recipientId: string): string {
    return recipientId.startsWith(WHATSAPP) && !this.twilioNumber.startsWith(WHATSAPP)
      ? `${WHATSAPP}${this.twilioNumber}`
      : this.twilioNumber;
  }

  private async create(form: Record<string, string | string[]>): Promise<void> {
    const basic = Buffer.from(`${this.accountSid}:${this.authToken}`).toString('base64');
    await this.client.call({
      path: `/2010-04-01/Accounts/${encodeURIComponent(this.accountSid)}/Messages.json`,
      form,
      headers: { authorization: `Basic ${basic}` },
    });
  }

  async sendTextMessage(recipientId: string, text: string): Promise<void> {
    for (const part of text.split('\n\n')) {
      await this.create({ To: recipientId, From: this.from(recipientId), Body: part });
    }
  }

  override sendImageUrl(recipientId: string, image: unknown): Promise<void> {
    return this.create({
      To: recipientId,
      From: this.from(recipientId),
      MediaUrl: [pythonStr(image)],
    });
  }

  override async sendCustomJson(recipientId: string, custom: unknown): Promise<void> {
    const message: Record<string, unknown> = isJsonObject(custom) ? { ...custom } : {};
    if (message.hangup === true && Object.keys(message).length === 1) {
      TwilioOutputChannel.log.debug('a hangup has nothing to end on a messaging channel');
      return;
    }
    if (message.to === undefined) message.to = recipientId;
    if (!isPresent(message.media_url) && message.body === undefined) message.body = '';
    if (!isPresent(message.messaging_service_sid) && message.from === undefined) {
      message.from = message.from_ ?? this.from(recipientId);
      delete message.from_;
    }
    await this.create(twilioParams(message));
  }
}

function isPresent(value: unknown): boolean {
  return value !== undefined && value !== null && value !== '' && value !== false;
}

/**
 * A Rasa-style message dict as Twilio's form parameters: `media_url` → `MediaUrl`, `from_` →
 * `From`, `messaging_service_sid` → `MessagingServiceSid`; a list repeats the field, an object
 * (`content_variables`) is sent as its JSON, null is left out.
 */
export function twilioParams(message: Record<string, unknown>): Record<string, string | string[]> {
  const form: Record<string, string | string[]> = {};
  for (const [key, value] of Object.entries(message)) {
    if (value === null || value === undefined) continue;
    const name = key
      .split('_')
      .filter((part) => part !== '')
      .map((part) => part[0]!.toUpperCase() + part.slice(1))
      .join('');
    form[name] = Array.isArray(value) ? value.map(paramValue) : paramValue(value);
  }
  return form;
}

/** One parameter value: a string as is, anything else as its JSON (`true`, `3`, `{"1":"x"}`). */
function paramValue(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}
