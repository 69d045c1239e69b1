import { Logger } from '@nestjs/common';
import type { Request, Response } from 'express';
import { type JsonObject } from 'src/core/events/event-base';
import { isJsonObject } from 'src/core/events/json-values';
import {
  badBody,
  type Connector,
  type ConnectorRoute,
  once,
  parseJsonBody,
  rawBody,
} from 'src/modules/channels/connector/connector';
import { PlatformClient } from 'src/modules/channels/connector/platform-client';
import { type ChannelInput } from 'src/modules/channels/input/channel-input';
import { type IdempotentIngress } from 'src/modules/idempotency';
import { BotFrameworkAuth } from './botframework-auth';
import { type BotFrameworkSettings } from './botframework-config';
import { BotFrameworkOutputChannel, BotFrameworkTokens } from './botframework.output-channel';

const obj = (value: unknown): Record<string, unknown> => (isJsonObject(value) ? value : {});

/**
 * Rasa's BotFrameworkInput at `/webhooks/botframework/webhook` (POST):
 *
 * - The `Authorization: Bearer <JWT>` is verified before the body is read (BotFrameworkAuth:
 *   Microsoft's keys, issuer, audience `app_id`, validity with 5 minutes of skew), then the
 *   token's `serviceUrl` claim must be the activity's `serviceUrl`; a failure is a 401 failure
 *   body (a key not endorsed for the activity's `channelId` a 403) and no turn runs. Rasa 3
 *   checks signature and audience only.
 * - An activity of type `message` is a user message: its `text` (empty when it has none), the
 *   sender `from.id`, and as metadata `{attachments}` when the activity has attachments (else
 *   none), as Rasa gives them. Other activity types are logged and answered alike.
 * - Replies go to the activity's `serviceUrl` and conversation (BotFrameworkOutputChannel).
 * - Answers `success` as text. A redelivered activity (same `id`) replays the first answer
 *   (see `once`).
 *
 * Rasa's BotFrameworkInput has no output channel for `output_channel=botframework`.
 */
export class BotFrameworkConnector implements Connector {
  private static readonly log = new Logger('Connector[botframework]');
  readonly name = 'botframework';
  private readonly client: PlatformClient;
  private readonly auth: BotFrameworkAuth;
  private readonly tokens: BotFrameworkTokens;

  constructor(
    settings: BotFrameworkSettings,
    private readonly input: ChannelInput,
    private readonly ingress: IdempotentIngress | null = null,
  ) {
    this.client = new PlatformClient({
      name: 'botframework',
      // Every call names its own base: the token endpoint or the activity's serviceUrl.
      ...settings.http,
      baseUrl: settings.loginUrl,
    });
    this.auth = new BotFrameworkAuth(
      settings.appId,
      settings.openidMetadataUrl,
      settings.http.timeoutMs,
    );
    this.tokens = new BotFrameworkTokens(
      this.client,
      settings.loginUrl,
      settings.appId,
      settings.appPassword,
    );
  }

  outputChannel(): null {
    return null;
  }

  async handle(route: ConnectorRoute, req: Request, res: Response): Promise<boolean> {
    if (route !== 'webhook' || req.method !== 'POST') return false;
    const token = await this.auth.verify(req.headers.authorization);
    const activity = parseJsonBody(this.name, rawBody(req));
    BotFrameworkAuth.checkActivity(token, activity);
    if (activity.type !== 'message') {
      BotFrameworkConnector.log.log({ type: String(activity.type) }, 'Not received message type');
      res.status(200).type('text/plain').send('success');
      return true;
    }
    const sender = obj(activity.from).id;
    const conversationId = obj(activity.conversation).id;
    const serviceUrl = activity.serviceUrl as string; // equal to the verified claim
    if (!URL.canParse(serviceUrl) || !/^https?:$/.test(new URL(serviceUrl).protocol)) {
      throw badBody(this.name, 'The activity\'s "serviceUrl" is not an http(s) URL.');
    }
    if (typeof sender !== 'string' || sender === '') {
      throw badBody(this.name, 'The activity has no "from.id".');
    }
    if (typeof conversationId !== 'string' || conversationId === '') {
      throw badBody(this.name, 'The activity has no "conversation.id".');
    }
    if (
      activity.text !== undefined &&
      activity.text !== null &&
      typeof activity.text !== 'string'
    ) {
      throw badBody(this.name, 'The activity\'s "text" must be a string.');
    }
    const output = new BotFrameworkOutputChannel(this.client, this.tokens, {
      serviceUrl,
      conversationId,
      bot: activity.recipient ?? null,
    });
    const metadata: JsonObject | null =
      Array.isArray(activity.attachments) && activity.attachments.length > 0
        ? { attachments: activity.attachments as JsonObject[] }
        : null;
    const activityId = typeof activity.id === 'string' ? activity.id : null;
    await once(this.ingress, req, res, { scope: this.name, sender }, activityId, async () => {
      await this.input.handleMessage({
        text: typeof activity.text === 'string' ? activity.text : '',
        senderId: sender,
        inputChannel: this.name,
        output,
        metadata,
      });
      res.status(200).type('text/plain').send('success');
    });
    return true;
  }
}
