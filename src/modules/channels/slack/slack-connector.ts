import { Logger } from '@nestjs/common';
import type { Request, Response } from 'express';
import { type JsonObject } from 'src/core';
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
import { type SlackSettings } from './slack-config';
import { SlackOutputChannel } from './slack.output-channel';

/** Slack refuses requests signed more than five minutes away from now (replays). */
const MAX_CLOCK_SKEW_S = 5 * 60;

/** The interactive components whose value becomes the user's text (Rasa's list). */
const INTERACTIVE = [
  'button',
  'select',
  'static_select',
  'external_select',
  'conversations_select',
  'users_select',
  'channels_select',
  'overflow',
  'datepicker',
];

/** Rasa's slack metadata on the user event. */
interface SlackMetadata extends JsonObject {
  out_channel: string | null;
  thread_id: string | null;
  users: string[];
}

const str = (value: unknown): string | null => (typeof value === 'string' ? value : null);
const obj = (value: unknown): Record<string, unknown> => (isJsonObject(value) ? value : {});

/**
 * Rasa's SlackInput at `/webhooks/slack/webhook`. Every request is checked first: the
 * `X-Slack-Signature` (`v0=` HMAC-SHA256 of `v0:<X-Slack-Request-Timestamp>:<raw body>` with
 * the signing secret, compared in constant time) and a timestamp within five minutes; a bad or
 * missing one is a 401 failure body before the body is parsed. Then, as Rasa:
 *
 * - JSON (Events API): `url_verification` answers the `challenge` (a JSON string); a
 *   `message`/`app_mention` event with text and no `bot_id`, in a DM, mentioning the bot or in
 *   `slack_channel`, is one user message (the bot's own mentions and Slack's link markup taken
 *   out); anything else is answered `Bot message delivered.` or `channel not supported.`.
 * - Form-encoded `payload` (interactivity): the value of a button, select, overflow or
 *   datepicker is the user's text; a link button is `User clicked link button`; others a 500.
 * - A Slack retry (`X-Slack-Retry-Num`) whose reason (`X-Slack-Retry-Reason`) is in
 *   `errors_ignore_retry` (default `http_timeout`) is answered 201 with `X-Slack-No-Retry: 1`
 *   and no second turn. Any other redelivery of an event (same `event_id`) replays the first
 *   answer (see `once`).
 *
 * The sender is the Slack user (with `conversation_granularity: channel|thread`, joined with
 * the channel and thread by `_`); the user event's metadata is `{out_channel, thread_id, users}`.
 */
export class SlackConnector implements Connector {
  private static readonly log = new Logger('Connector[slack]');
  readonly name = 'slack';
  private readonly client: PlatformClient;

  constructor(
    private readonly settings: SlackSettings,
    private readonly input: ChannelInput,
    private readonly ingress: IdempotentIngress | null = null,
    private readonly now: () => number = Date.now,
  ) {
    this.client = new PlatformClient({
      name: 'slack',
      ...settings.http,
      headers: { authorization: `Bearer ${settings.token}` },
    });
  }

  /** Rasa's get_output_channel(): to `slack_channel`, else to the recipient id. */
  outputChannel(): SlackOutputChannel {
    return new SlackOutputChannel(this.client, this.settings.channel, null);
  }

  async handle(route: ConnectorRoute, req: Request, res: Response): Promise<boolean> {
    if (route !== 'webhook' || req.method !== 'POST') return false;
    const raw = rawBody(req);
    this.verify(req, raw);
    const contentType = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
    if (contentType === 'application/json') {
      await this.event(req, res, parseJsonBody(this.name, raw));
    } else if (contentType === 'application/x-www-form-urlencoded') {
      await this.interaction(req, res, raw);
    } else {
      res.status(200).type('text/plain').send('Bot message delivered.');
    }
    return true;
  }

  /** Slack's request signing: refused with a 401 before anything is parsed. */
  private verify(req: Request, raw: Buffer): void {
    const signature = req.headers['x-slack-signature'];
    const timestamp = req.headers['x-slack-request-timestamp'];
    if (typeof signature !== 'string' || typeof timestamp !== 'string') {
      throw badSignature(
        this.name,
        'Message is not properly signed with a valid X-Slack-Signature header',
      );
    }
    const ts = /^\d{1,12}$/.test(timestamp) ? Number(timestamp) : NaN;
    if (!Number.isFinite(ts) || Math.abs(this.now() / 1000 - ts) > MAX_CLOCK_SKEW_S) {
      throw badSignature(
        this.name,
        'The X-Slack-Request-Timestamp is more than five minutes from local time',
      );
    }
    const base = Buffer.concat([Buffer.from(`v0:${timestamp}:`, 'utf8'), raw]);
    const expected = `v0=${hmacHex(this.settings.signingSecret, base)}`;
    if (!safeEqual(signature, expected)) {
      throw badSignature(
        this.name,
        'Message is not properly signed with a valid X-Slack-Signature header',
      );
    }
  }

  private async event(req: Request, res: Response, body: Record<string, unknown>): Promise<void> {
    if ('challenge' in body) {
      res.status(200).json(body.challenge ?? null);
      return;
    }
    const event = obj(body.event);
    const metadata = this.eventMetadata(body, event);
    const isUserMessage =
      body.event !== undefined &&
      body.event !== null &&
      (event.type === 'message' || event.type === 'app_mention') &&
      typeof event.text === 'string' &&
      event.text !== '' &&
      !event.bot_id;
    if (!isUserMessage) {
      res.status(200).type('text/plain').send('Bot message delivered.');
      return;
    }
    const supported =
      event.channel_type === 'im' ||
      event.type === 'app_mention' ||
      metadata.out_channel === this.settings.channel;
    if (!supported) {
      SlackConnector.log.warn(
        { out_channel: metadata.out_channel },
        'Received message on unsupported channel',
      );
      res.status(200).type('text/plain').send('channel not supported.');
      return;
    }
    const text = sanitize(event.text as string, metadata.users);
    await this.turn(req, res, text, str(event.user) ?? '', metadata, str(body.event_id));
  }

  private async interaction(req: Request, res: Response, raw: Buffer): Promise<void> {
    const field = new URLSearchParams(raw.toString('utf8')).get('payload');
    let payload: Record<string, unknown>;
    try {
      payload = obj(field === null ? null : JSON.parse(field));
    } catch {
      throw badBody(this.name, 'The form field "payload" is not valid JSON.');
    }
    const actions = Array.isArray(payload.actions) ? payload.actions : [];
    const action = obj(actions[0]);
    const type = str(action.type);
    if (type !== null && INTERACTIVE.includes(type)) {
      const text = interactiveValue(type, action);
      if (text !== null) {
        const message = obj(payload.message);
        const user = obj(payload.user);
        const metadata: SlackMetadata = {
          out_channel: str(obj(payload.channel).id),
          thread_id: str(message.thread_ts) ?? str(message.ts),
          users: str(user.id) === null ? [] : [user.id as string],
        };
        await this.turn(req, res, text, str(user.id) ?? '', metadata, null);
        return;
      }
      if (type === 'button') {
        // A link button has no value: its click is not a message.
        res.status(200).type('text/plain').send('User clicked link button');
        return;
      }
    } else if (type !== null) {
      SlackConnector.log.warn(
        { type },
        'Received input from a Slack interactive component whose payload is not supported',
      );
    }
    res.status(500).type('text/plain').send('The input message could not be processed.');
  }

  private eventMetadata(body: Record<string, unknown>, event: Record<string, unknown>) {
    let users: string[] = [];
    if (Array.isArray(body.authed_users)) {
      users = body.authed_users.filter((u): u is string => typeof u === 'string');
    } else if (Array.isArray(body.authorizations) && body.authorizations.length > 0) {
      const id = str(obj(body.authorizations[0]).user_id);
      if (id !== null) users = [id];
    }
    const metadata: SlackMetadata = {
      out_channel: str(event.channel),
      thread_id: str(event.thread_ts) ?? str(event.ts),
      users,
    };
    return metadata;
  }

  /** Rasa's process_message: the retry rule, then one turn; answers an empty 200. */
  private async turn(
    req: Request,
    res: Response,
    text: string,
    user: string,
    metadata: SlackMetadata,
    eventId: string | null,
  ): Promise<void> {
    const retryReason = req.headers[this.settings.retryReasonHeader];
    const retryCount = req.headers[this.settings.retryNumberHeader];
    if (
      typeof retryCount === 'string' &&
      retryCount !== '' &&
      typeof retryReason === 'string' &&
      this.settings.errorsIgnoreRetry.includes(retryReason)
    ) {
      SlackConnector.log.warn(
        { retry: retryCount, reason: retryReason },
        'Received a retry request from Slack; not handled again',
      );
      res.status(201).setHeader('X-Slack-No-Retry', '1');
      res.end();
      return;
    }
    const channel = metadata.out_channel ?? this.settings.channel;
    const thread = this.settings.useThreads ? metadata.thread_id : null;
    const sender = this.conversationId(user, metadata);
    await once(this.ingress, req, res, { scope: this.name, sender }, eventId, async () => {
      await this.input.handleMessage({
        text,
        senderId: sender,
        inputChannel: this.name,
        output: new SlackOutputChannel(this.client, channel, thread),
        metadata,
      });
      res.status(200).type('text/plain').send('');
    });
  }

  private conversationId(user: string, metadata: SlackMetadata): string {
    const { out_channel: channel, thread_id: thread } = metadata;
    if (this.settings.granularity === 'channel' && channel) return `${user}_${channel}`;
    if (this.settings.granularity === 'thread' && channel && thread) {
      return `${user}_${channel}_${thread}`;
    }
    return user;
  }
}

function interactiveValue(type: string, action: Record<string, unknown>): string | null {
  switch (type) {
    case 'button':
      return str(action.value);
    case 'select':
      return Array.isArray(action.selected_options)
        ? str(obj(action.selected_options[0]).value)
        : null;
    case 'static_select':
    case 'external_select':
    case 'overflow':
      return str(obj(action.selected_option).value);
    case 'conversations_select':
      return str(action.selected_conversation);
    case 'users_select':
      return str(action.selected_user);
    case 'channels_select':
      return str(action.selected_channel);
    case 'datepicker':
      return str(action.selected_date);
    default:
      return null;
  }
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * Rasa's _sanitize_user_message: the bot's own mentions (`<@U123>`) are taken out and Slack's
 * link markup `<https://x.y|x.y>` becomes its label.
 */
export function sanitize(text: string, users: readonly string[]): string {
  let out = text;
  for (const uid of users) {
    const id = escapeRegExp(uid);
    out = out
      .replace(new RegExp(`<@${id}>\\s`, 'g'), '')
      .replace(new RegExp(`\\s<@${id}>`, 'g'), '')
      .replace(new RegExp(`<@${id}>`, 'g'), ' ');
  }
  out = out.replace(/<(?:mailto|http|https):\/\/.*?\|.*?>/g, (link) =>
    (link.split('|')[1] ?? '').replace(/>/g, ''),
  );
  return out.trim();
}
