import { Logger } from '@nestjs/common';
import type { Request, Response } from 'express';
import { DialogueError } from 'src/core';
import { isJsonObject } from 'src/core/events/json-values';
import {
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
import { type FacebookSettings } from './facebook-config';
import { FacebookOutputChannel } from './facebook.output-channel';

const obj = (value: unknown): Record<string, unknown> => (isJsonObject(value) ? value : {});

/**
 * Rasa's FacebookInput at `/webhooks/facebook/webhook`:
 *
 * - GET (Meta's subscription check): `hub.verify_token` equal to `verify` answers
 *   `hub.challenge` as text; another token is a 403 failure body (as Meta's docs ask; Rasa
 *   answers `failure, invalid token` with a 200).
 * - POST: `X-Hub-Signature-256` must be `sha256=` the HMAC-SHA256 of the raw body with the app
 *   `secret` (compared in constant time), else a 401 failure body before the body is parsed.
 *   Each messaging event of each entry is one user message: a quick reply's payload, a text
 *   (not an echo), the URL of an audio, image, video or file attachment, or a postback's
 *   payload; the sender is `sender.id`. Around each turn the sender actions `mark_seen`,
 *   `typing_on` and (after it) `typing_off` are sent. Answers `success`. The user event has no
 *   metadata (Rasa's Facebook sends none). A redelivered batch (same first `mid`) replays the
 *   first answer (see `once`).
 */
export class FacebookConnector implements Connector {
  private static readonly log = new Logger('Connector[facebook]');
  readonly name = 'facebook';
  private readonly client: PlatformClient;

  constructor(
    private readonly settings: FacebookSettings,
    private readonly input: ChannelInput,
    private readonly ingress: IdempotentIngress | null = null,
  ) {
    this.client = new PlatformClient({
      name: 'facebook',
      ...settings.http,
    });
  }

  static warnUnhandled(): void {
    FacebookConnector.log.warn('Received a message from facebook that we can not handle.');
  }

  /** Rasa's FacebookInput has no output channel for `output_channel=facebook`. */
  outputChannel(): null {
    return null;
  }

  async handle(route: ConnectorRoute, req: Request, res: Response): Promise<boolean> {
    if (route !== 'webhook') return false;
    if (req.method === 'GET') {
      this.subscription(req, res);
      return true;
    }
    if (req.method !== 'POST') return false;
    const raw = rawBody(req);
    const signature = req.headers['x-hub-signature-256'];
    const expected = `sha256=${hmacHex(this.settings.secret, raw)}`;
    if (typeof signature !== 'string' || !safeEqual(signature, expected)) {
      FacebookConnector.log.warn(
        'Wrong fb secret! Make sure this matches the secret in your facebook app settings',
      );
      throw badSignature(
        this.name,
        'The request is not signed with the app secret (X-Hub-Signature-256)',
      );
    }
    const payload = parseJsonBody(this.name, raw);
    const turns: Array<{ text: string; sender: string; mid: string | null }> = [];
    for (const entry of Array.isArray(payload.entry) ? payload.entry : []) {
      const events = obj(entry).messaging;
      for (const event of Array.isArray(events) ? events : []) {
        const e = obj(event);
        const text = eventText(e);
        if (text === null) continue;
        const sender = obj(e.sender).id;
        const mid = obj(e.message).mid ?? obj(e.postback).mid;
        turns.push({
          text,
          sender: typeof sender === 'string' ? sender : '',
          mid: typeof mid === 'string' ? mid : null,
        });
      }
    }
    // A redelivered batch (same first `mid`, same body) replays the first answer.
    const first = turns[0];
    const scope = { scope: this.name, sender: first?.sender ?? '' };
    await once(this.ingress, req, res, scope, first?.mid ?? null, async () => {
      for (const turn of turns) await this.turn(turn.text, turn.sender);
      res.status(200).type('text/plain').send('success');
    });
    return true;
  }

  private subscription(req: Request, res: Response): void {
    const token = req.query['hub.verify_token'];
    const challenge = req.query['hub.challenge'];
    if (typeof token === 'string' && safeEqual(token, this.settings.verify)) {
      res
        .status(200)
        .type('text/plain')
        .send(typeof challenge === 'string' ? challenge : '');
      return;
    }
    FacebookConnector.log.warn(
      'Invalid fb verify token! Make sure this matches your webhook settings on the facebook app.',
    );
    throw new DialogueError(
      'AUTH.NOT_AUTHORIZED',
      'The hub.verify_token does not match the verify token of the facebook channel.',
      { channel: this.name },
    );
  }

  private async turn(text: string, sender: string): Promise<void> {
    const output = new FacebookOutputChannel(this.client, this.settings.pageAccessToken);
    await output.sendAction(sender, 'mark_seen');
    await output.sendAction(sender, 'typing_on');
    try {
      await this.input.handleMessage({
        text,
        senderId: sender,
        inputChannel: this.name,
        output,
        metadata: null,
      });
    } finally {
      await output.sendAction(sender, 'typing_off');
    }
  }
}

const ATTACHMENT_TYPES = ['audio', 'image', 'video', 'file'];

/** The text of one messaging event as Rasa reads it; null for events it does not handle. */
export function eventText(event: Record<string, unknown>): string | null {
  if (isJsonObject(event.message)) {
    const message = event.message;
    const quickReply = obj(message.quick_reply).payload;
    if (typeof quickReply === 'string' && quickReply !== '') return quickReply;
    if (typeof message.text === 'string' && !message.is_echo) return message.text;
    const attachment = Array.isArray(message.attachments) ? obj(message.attachments[0]) : {};
    const url = obj(attachment.payload).url;
    if (ATTACHMENT_TYPES.includes(String(attachment.type)) && typeof url === 'string') return url;
    FacebookConnector.warnUnhandled();
    return null;
  }
  if (isJsonObject(event.postback)) {
    const payload = event.postback.payload;
    return typeof payload === 'string' ? payload : null;
  }
  return null;
}
