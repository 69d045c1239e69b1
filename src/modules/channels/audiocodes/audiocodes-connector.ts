import { Logger } from '@nestjs/common';
import type { Request, Response } from 'express';
import { type JsonObject, requireConversationId } from 'src/core';
import { isJsonObject } from 'src/core/events/json-values';
import {
  badBody,
  badSignature,
  type Connector,
  type ConnectorRoute,
  parseJsonBody,
} from 'src/modules/channels/connector/connector';
import { safeEqual } from 'src/modules/channels/connector/signature';
import { type ChannelInput } from 'src/modules/channels/input/channel-input';
import { ApiError } from 'src/platform/errors/api-error';
import { type AudiocodesSettings } from './audiocodes-config';
import { AudiocodesOutputChannel } from './audiocodes.output-channel';

/** How often forgotten conversations are looked for (Rasa's cleanup job: every 10 minutes). */
const CLEANUP_INTERVAL_MS = 10 * 60_000;
/** Activity ids remembered per conversation to drop VoiceAI Connect's re-sends. */
const MAX_ACTIVITY_IDS = 1000;

const CONVERSATION_ROUTE = /^conversation\/([^/]+)\/(activities|disconnect|keepalive)$/;

interface Conversation {
  readonly activityIds: Set<string>;
  lastActivity: number;
}

const str = (value: unknown): string | null => (typeof value === 'string' ? value : null);

/** The text and metadata of one Bot API activity, or null for one that is not a user turn. */
export function activityTurn(
  activity: JsonObject,
): { text: string; metadata: JsonObject | null } | null {
  if (activity.type === 'message') {
    const text = str(activity.text);
    if (text === null || text === '') return null;
    return { text, metadata: isJsonObject(activity.parameters) ? activity.parameters : null };
  }
  if (activity.type !== 'event' || typeof activity.name !== 'string' || activity.name === '') {
    return null;
  }
  const parameters = isJsonObject(activity.parameters) ? activity.parameters : {};
  if (activity.name === 'start') {
    // Rasa's CallParameters of the call.
    return {
      text: '/session_start',
      metadata: {
        call_id: parameters.vaigConversationId ?? null,
        user_phone: parameters.caller ?? null,
        bot_phone: parameters.callee ?? null,
        user_name: parameters.callerDisplayName ?? null,
        user_host: parameters.callerHost ?? null,
        bot_host: parameters.calleeHost ?? null,
        direction: null,
        stream_id: null,
      },
    };
  }
  if (activity.name === 'DTMF') {
    return { text: '/vaig_event_DTMF', metadata: { value: activity.value ?? null } };
  }
  return {
    text: `/vaig_event_${activity.name}`,
    metadata: { ...parameters, ...('value' in activity ? { value: activity.value } : {}) },
  };
}

/**
 * Rasa Pro's AudiocodesInput, the REST flavour of the AudioCodes VoiceAI Connect Bot API, below
 * `/webhooks/audiocodes/`. Every request must carry `Authorization: Bearer <token>` (or
 * `Token <token>`; constant time), else a 401 failure body before the body is read.
 *
 * - `GET webhook`: `{type: "ac-bot-api", success: true}` (VoiceAI Connect's check).
 * - `POST webhook` `{conversation}`: a new conversation; answered with its URLs relative to
 *   the webhook (`conversation/<id>/activities`, `…/disconnect`, `…/keepalive`) and
 *   `expiresSeconds` (`keep_alive`). A conversation that already exists is a 400.
 * - `POST conversation/<id>/activities` `{activities: [...]}`: each activity not seen before
 *   (by `id`) is one turn with the conversation id as sender: a `message` its `text` (metadata
 *   its `parameters`), the `start` event `/session_start` (metadata: the call's parameters),
 *   `DTMF` `/vaig_event_DTMF` (`{value}`), any other event `/vaig_event_<name>`. Answered with
 *   the bot's activities: `{conversation, activities}`. A turn that fails adds a `hangup`
 *   event (as Rasa) instead of a failure body, so the call ends with a clear cause.
 * - `POST conversation/<id>/disconnect` `{reason}`: the turn `/session_end` (`{reason}`),
 *   then the conversation is forgotten; `keepalive` keeps it. An unknown conversation is 404.
 *
 * Conversations live in this process's memory, as in Rasa: one that sends nothing for
 * `keep_alive × keep_alive_expiration_factor` seconds is forgotten.
 */
export class AudiocodesConnector implements Connector {
  private static readonly log = new Logger('Connector[audiocodes]');
  readonly name = 'audiocodes';
  private readonly conversations = new Map<string, Conversation>();
  private cleanup: NodeJS.Timeout | null = null;

  constructor(
    private readonly settings: AudiocodesSettings,
    private readonly input: ChannelInput,
    private readonly now: () => number = Date.now,
  ) {}

  start(): Promise<void> {
    this.cleanup ??= setInterval(() => this.forgetInactive(), CLEANUP_INTERVAL_MS).unref();
    return Promise.resolve();
  }

  stop(): void {
    if (this.cleanup !== null) clearInterval(this.cleanup);
    this.cleanup = null;
  }

  /** Rasa's AudiocodesInput has no output channel for `output_channel=audiocodes`. */
  outputChannel(): null {
    return null;
  }

  async handle(route: ConnectorRoute, req: Request, res: Response): Promise<boolean> {
    if (route === 'webhook') {
      if (req.method !== 'GET' && req.method !== 'POST') return false;
      this.verify(req);
      if (req.method === 'GET') {
        res.status(200).json({ type: 'ac-bot-api', success: true });
      } else {
        res.status(200).json(this.create(body(req)));
      }
      return true;
    }
    const match = CONVERSATION_ROUTE.exec(route);
    if (match === null || req.method !== 'POST') return false;
    this.verify(req);
    let id: string;
    try {
      id = decodeURIComponent(match[1]!);
    } catch {
      throw badBody(this.name, 'The conversation id in the path is not valid.');
    }
    const conversation = this.conversation(id);
    const action = match[2];
    if (action === 'keepalive') {
      res.status(200).json({});
    } else if (action === 'disconnect') {
      await this.disconnect(id, body(req, true));
      res.status(200).json({});
    } else {
      res.status(200).json(await this.activities(id, conversation, body(req)));
    }
    return true;
  }

  /** Sanic's `request.token`: the `Authorization` header without `Bearer `/`Token `. */
  private verify(req: Request): void {
    const header = req.headers.authorization;
    const token =
      typeof header === 'string' ? header.replace(/^(Bearer|Token)\s+/i, '').trim() : '';
    if (token === '') throw badSignature(this.name, 'Authentication token required.');
    if (!safeEqual(token, this.settings.token)) {
      throw badSignature(this.name, 'Invalid authentication token.');
    }
  }

  private create(request: Record<string, unknown>): Record<string, unknown> {
    const given = request.conversation;
    if (typeof given !== 'string') {
      throw badBody(this.name, 'The request must name its "conversation" (a string).');
    }
    const id = requireConversationId(given, 'conversation', 'body');
    if (this.conversations.has(id)) {
      throw badBody(this.name, `Conversation ${id} already exists.`);
    }
    this.conversations.set(id, { activityIds: new Set(), lastActivity: this.now() });
    const path = `conversation/${encodeURIComponent(id)}`;
    return {
      activitiesURL: `${path}/activities`,
      disconnectURL: `${path}/disconnect`,
      refreshURL: `${path}/keepalive`,
      expiresSeconds: this.settings.keepAliveSeconds,
    };
  }

  private conversation(id: string): Conversation {
    const conversation = this.conversations.get(id);
    if (conversation === undefined) {
      throw new ApiError('HTTP.NOT_FOUND', 'Conversation not found', { channel: this.name });
    }
    conversation.lastActivity = this.now();
    return conversation;
  }

  private async activities(
    id: string,
    conversation: Conversation,
    request: Record<string, unknown>,
  ): Promise<Record<string, unknown>> {
    if (!Array.isArray(request.activities)) {
      throw badBody(this.name, 'The request must carry "activities" (a list).');
    }
    const output = new AudiocodesOutputChannel();
    for (const activity of request.activities) {
      if (!isJsonObject(activity)) continue;
      const activityId = str(activity.id);
      if (activityId !== null) {
        if (conversation.activityIds.has(activityId)) {
          AudiocodesConnector.log.warn(
            { conversation: id, activity: activityId },
            'VoiceAI Connect sent an activity again (the bot answered late?); skipped',
          );
          continue;
        }
        conversation.activityIds.add(activityId);
        if (conversation.activityIds.size > MAX_ACTIVITY_IDS) {
          conversation.activityIds.delete(conversation.activityIds.values().next().value!);
        }
      }
      const turn = activityTurn(activity);
      if (turn === null) continue;
      try {
        await this.input.handleMessage({
          text: turn.text,
          senderId: id,
          inputChannel: this.name,
          output,
          metadata: turn.metadata,
        });
      } catch {
        // ChannelInput logged it; the caller hears why the call ends.
        await output.add({
          type: 'event',
          name: 'hangup',
          text: 'An error occurred while handling the last message.',
        });
      }
    }
    return { conversation: id, activities: output.activities };
  }

  private async disconnect(id: string, request: Record<string, unknown>): Promise<void> {
    try {
      await this.input.handleMessage({
        text: '/session_end',
        senderId: id,
        inputChannel: this.name,
        // The call is over: nothing the bot says can reach it.
        output: new AudiocodesOutputChannel(),
        metadata: { reason: typeof request.reason === 'string' ? request.reason : null },
      });
    } finally {
      this.conversations.delete(id);
    }
  }

  private forgetInactive(): void {
    const limit = this.settings.keepAliveSeconds * this.settings.keepAliveExpirationFactor * 1000;
    const now = this.now();
    for (const [id, conversation] of this.conversations) {
      if (now - conversation.lastActivity > limit) {
        AudiocodesConnector.log.warn({ conversation: id }, 'conversation inactive; forgotten');
        this.conversations.delete(id);
      }
    }
  }
}

/**
 * The JSON body: raw bytes below `webhook` (the body parser leaves them), parsed JSON on the
 * conversation routes. Anything but a JSON object is a 400 (an `optional` body may be empty).
 */
function body(req: Request, optional = false): Record<string, unknown> {
  const value: unknown = req.body;
  if (optional && (value === undefined || (Buffer.isBuffer(value) && value.length === 0))) {
    return {};
  }
  if (Buffer.isBuffer(value)) return parseJsonBody('audiocodes', value);
  if (typeof value === 'string') return parseJsonBody('audiocodes', Buffer.from(value, 'utf8'));
  if (isJsonObject(value)) return value;
  throw badBody('audiocodes', 'The request body must be a JSON object.');
}
