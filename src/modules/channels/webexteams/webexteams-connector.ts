import { Logger } from '@nestjs/common';
import type { Request, Response } from 'express';
import { isJsonObject } from 'src/core/events/json-values';
import {
  badBody,
  badSignature,
  type Connector,
  type ConnectorRoute,
  once,
  parseJsonBody,
  rawBody,
} from 'src/modules/channels/connector/connector';
import { PlatformClient } from 'src/modules/channels/connector/platform-client';
import { hmacHex, safeEqual } from 'src/modules/channels/connector/signature';
import { type ChannelInput } from 'src/modules/channels/input/channel-input';
import { type IdempotentIngress } from 'src/modules/idempotency';
import { type WebexTeamsSettings } from './webexteams-config';
import { WebexTeamsOutputChannel } from './webexteams.output-channel';

const SIGNATURE_HEADER = 'x-spark-signature';

const obj = (value: unknown): Record<string, unknown> => (isJsonObject(value) ? value : {});

/**
 * Rasa's WebexTeamsInput at `/webhooks/webexteams/webhook` (POST):
 *
 * - With `webhook_secret` (Parley's), `X-Spark-Signature` must be the hex HMAC-SHA1 of the raw
 *   body with it, as Webex signs deliveries of a webhook created with a secret (compared in
 *   constant time), else a 401 failure body before the body is parsed. Without it deliveries
 *   are taken unsigned, as Rasa does, and a warning says so at start: the message itself is
 *   still read from Webex with the bot's token, so a forged delivery can only point at a
 *   message the bot can read.
 * - The delivery carries only the message id (`data.id`): the message is read with
 *   `GET /v1/messages/{id}`; one the bot wrote itself (its `personId` is the bot's, from
 *   `GET /v1/people/me`, asked once) answers `OK` without a turn; any other is a user message:
 *   its `text`, the sender its `personId`, no metadata (Rasa sends none). Answers empty. While
 *   the bot's id cannot be read, no message is answered (logged).
 * - Deliveries of other resources or events than messages `created` answer `OK` without a
 *   turn (Rasa would try to read them as messages). A message that cannot be read is a 400
 *   failure body (logged). A redelivery of the same message id replays the first answer.
 *
 * Rasa's WebexTeamsInput has no output channel for `output_channel=webexteams`.
 */
export class WebexTeamsConnector implements Connector {
  private static readonly log = new Logger('Connector[webexteams]');
  readonly name = 'webexteams';
  private readonly client: PlatformClient;
  private botId: string | null = null;

  constructor(
    private readonly settings: WebexTeamsSettings,
    private readonly input: ChannelInput,
    private readonly ingress: IdempotentIngress | null = null,
  ) {
    this.client = new PlatformClient({
      name: 'webexteams',
      ...settings.http,
      headers: { authorization: `Bearer ${settings.accessToken}` },
    });
  }

  outputChannel(): null {
    return null;
  }

  async handle(route: ConnectorRoute, req: Request, res: Response): Promise<boolean> {
    if (route !== 'webhook' || req.method !== 'POST') return false;
    const raw = rawBody(req);
    if (this.settings.webhookSecret !== null) {
      const given = req.headers[SIGNATURE_HEADER];
      const expected = hmacHex(this.settings.webhookSecret, raw, 'sha1');
      if (typeof given !== 'string' || !safeEqual(given.toLowerCase(), expected)) {
        throw badSignature(
          this.name,
          'The delivery is not signed with the webhook secret (X-Spark-Signature)',
        );
      }
    }
    const delivery = parseJsonBody(this.name, raw);
    if (
      (delivery.resource !== undefined && delivery.resource !== 'messages') ||
      (delivery.event !== undefined && delivery.event !== 'created')
    ) {
      res.status(200).type('text/plain').send('OK');
      return true;
    }
    const messageId = obj(delivery.data).id;
    if (typeof messageId !== 'string' || messageId === '') {
      throw badBody(this.name, 'The delivery has no message id ("data.id").');
    }
    const answer = await this.client.call({
      method: 'GET',
      path: `/v1/messages/${encodeURIComponent(messageId)}`,
    });
    const message = obj(answer.body);
    const personId = message.personId;
    const roomId = message.roomId;
    if (!answer.ok || typeof personId !== 'string' || typeof roomId !== 'string') {
      throw badBody(this.name, `The message of the delivery could not be read from Webex.`);
    }
    const me = await this.me();
    if (me === null || personId === me) {
      // The bot's own message: answering it would loop. Without the bot's id (people/me
      // failed, logged) no message is answered, for the same reason.
      if (me === null) {
        WebexTeamsConnector.log.error(
          "the bot's person id (GET /v1/people/me) is unknown; message not handled",
        );
      }
      res.status(200).type('text/plain').send('OK');
      return true;
    }
    const output = new WebexTeamsOutputChannel(this.client, this.settings.room ?? roomId);
    await once(
      this.ingress,
      req,
      res,
      { scope: this.name, sender: personId },
      messageId,
      async () => {
        await this.input.handleMessage({
          text: typeof message.text === 'string' ? message.text : '',
          senderId: personId,
          inputChannel: this.name,
          output,
          metadata: null,
        });
        res.status(200).type('text/plain').send('');
      },
    );
    return true;
  }

  /** The bot's person id from `GET /v1/people/me`, remembered once known. */
  private async me(): Promise<string | null> {
    if (this.botId !== null) return this.botId;
    const answer = await this.client.call({ method: 'GET', path: '/v1/people/me' });
    const id = obj(answer.body).id;
    if (answer.ok && typeof id === 'string') this.botId = id;
    return this.botId;
  }
}
