import { Logger } from '@nestjs/common';
import { pythonStr } from 'src/core/actions/nlg';
import { isJsonObject } from 'src/core/events/json-values';
import { ConnectorOutputChannel, textParts } from 'src/modules/channels/connector/connector';
import { type PlatformClient } from 'src/modules/channels/connector/platform-client';

/** The scope of the token a bot sends its activities with. */
export const BOTFRAMEWORK_SCOPE = 'https://api.botframework.com/.default';

/** A token is renewed this long before it expires, so none expires on its way. */
const RENEW_MARGIN_MS = 5 * 60 * 1000;

/**
 * The app's access token for the Bot Connector API (OAuth 2.0 client credentials at
 * `login_url`, scope `https://api.botframework.com/.default`), kept until 5 minutes before it
 * expires (Rasa keeps it until it expires) and shared by every turn of the connector; turns that
 * need a new one at the same time wait for the same request.
 */
export class BotFrameworkTokens {
  private static readonly log = new Logger('Connector[botframework]');
  private token: { value: string; renewAt: number } | null = null;
  private pending: Promise<string | null> | null = null;

  constructor(
    private readonly client: PlatformClient,
    private readonly loginUrl: string,
    private readonly appId: string,
    private readonly appPassword: string,
  ) {}

  /** The current token, or null when Microsoft would not give one (logged). */
  get(): Promise<string | null> {
    if (this.token !== null && Date.now() < this.token.renewAt) {
      return Promise.resolve(this.token.value);
    }
    this.pending ??= this.fetch().finally(() => (this.pending = null));
    return this.pending;
  }

  private async fetch(): Promise<string | null> {
    const answer = await this.client.call({
      baseUrl: this.loginUrl,
      path: '',
      form: {
        grant_type: 'client_credentials',
        client_id: this.appId,
        client_secret: this.appPassword,
        scope: BOTFRAMEWORK_SCOPE,
      },
    });
    const body = isJsonObject(answer.body) ? answer.body : {};
    const value = body.access_token;
    const expiresIn = Number(body.expires_in);
    if (!answer.ok || typeof value !== 'string' || !Number.isFinite(expiresIn)) {
      BotFrameworkTokens.log.error({ status: answer.status }, 'Could not get BotFramework token');
      return null;
    }
    const lifetime = expiresIn * 1000;
    this.token = {
      value,
      renewAt:
        Date.now() + (lifetime > 2 * RENEW_MARGIN_MS ? lifetime - RENEW_MARGIN_MS : lifetime),
    };
    return value;
  }
}

/** Where one conversation's replies go: the parts of the incoming activity Rasa keeps. */
export interface BotFrameworkConversation {
  readonly serviceUrl: string;
  readonly conversationId: string;
  /** The activity's `recipient` (the bot), the `from` of every reply. */
  readonly bot: unknown;
}

const HERO_CARD = 'application/vnd.microsoft.card.hero';

/**
 * Rasa's BotFramework output channel: every bot message is one activity POSTed to
 * `<serviceUrl>/v3/conversations/<conversation id>/activities` with the app's bearer token
 * (BotFrameworkTokens), shaped as Rasa shapes it: `{type: "message", recipient: {id}, from:
 * <the bot>, channelData: {notification: {alert: "true"}}, text: ""}` with the part on top.
 * Text is split on blank lines (one activity each); an image is a hero card attachment with
 * the image; buttons a hero card with the text as `subtitle` and Rasa's buttons as given
 * (quick replies too); each element is merged into an activity of its own; custom JSON is sent
 * as given, the activity defaults filled in where it has none. Attachments are Rasa's base
 * fallback (`Attachment: <value>`). A failing call is logged and the turn goes on, as in Rasa.
 */
export class BotFrameworkOutputChannel extends ConnectorOutputChannel {
  readonly name = 'botframework';

  constructor(
    private readonly client: PlatformClient,
    private readonly tokens: BotFrameworkTokens,
    private readonly conversation: BotFrameworkConversation,
  ) {
    super();
  }

  private prepare(recipientId: string, part: Record<string, unknown>): Record<string, unknown> {
    return {
      type: 'message',
      recipient: { id: recipientId },
      from: this.conversation.bot,
      channelData: { notification: { alert: 'true' } },
      text: '',
      ...part,
    };
  }

  private async post(activity: Record<string, unknown>): Promise<void> {
    const token = await this.tokens.get();
    if (token === null) return; // logged: without a token the Bot Connector refuses the call
    await this.client.call({
      baseUrl: this.conversation.serviceUrl,
      path: `/v3/conversations/${encodeURIComponent(this.conversation.conversationId)}/activities`,
      headers: { authorization: `Bearer ${token}` },
      json: activity,
    });
  }

  async sendTextMessage(recipientId: string, text: string): Promise<void> {
    for (const part of textParts(text)) await this.post(this.prepare(recipientId, { text: part }));
  }

  override async sendImageUrl(recipientId: string, image: unknown): Promise<void> {
    const card = { contentType: HERO_CARD, content: { images: [{ url: pythonStr(image) }] } };
    await this.post(this.prepare(recipientId, { attachments: [card] }));
  }

  override async sendTextWithButtons(
    recipientId: string,
    text: string | null,
    buttons: readonly unknown[],
  ): Promise<void> {
    const card = { contentType: HERO_CARD, content: { subtitle: text, buttons } };
    await this.post(this.prepare(recipientId, { attachments: [card] }));
  }

  override async sendElements(recipientId: string, elements: readonly unknown[]): Promise<void> {
    for (const element of elements) {
      await this.post(this.prepare(recipientId, isJsonObject(element) ? element : {}));
    }
  }

  override async sendCustomJson(recipientId: string, custom: unknown): Promise<void> {
    // Python's `setdefault`: a key the JSON has (even null) is kept as it is.
    const activity: Record<string, unknown> = isJsonObject(custom) ? { ...custom } : {};
    setDefault(activity, 'type', 'message');
    const recipient = setDefault(activity, 'recipient', {});
    if (isJsonObject(recipient)) activity.recipient = { id: recipientId, ...recipient };
    setDefault(activity, 'from', this.conversation.bot);
    const channelData = setDefault(activity, 'channelData', {});
    if (isJsonObject(channelData)) {
      const notification = isJsonObject(channelData.notification) ? channelData.notification : {};
      activity.channelData = {
        ...channelData,
        notification:
          'notification' in channelData && !isJsonObject(channelData.notification)
            ? channelData.notification
            : { alert: 'true', ...notification },
      };
    }
    setDefault(activity, 'text', '');
    await this.post(activity);
  }
}

/** Python's `dict.setdefault`: the key's value, set to `value` first when the key is absent. */
function setDefault(o: Record<string, unknown>, key: string, value: unknown): unknown {
  if (!(key in o)) o[key] = value;
  return o[key];
}
