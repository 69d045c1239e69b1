import { Logger } from '@nestjs/common';
import type { Request, Response } from 'express';
import type { Server as HttpServer, IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
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
import { type WebSocket, WebSocketServer } from 'ws';
import { type AudiocodesSettings } from './audiocodes-config';
import { AudiocodesOutputChannel } from './audiocodes.output-channel';

/** How often forgotten conversations are looked for (Rasa's cleanup job: every 10 minutes). */
const CLEANUP_INTERVAL_MS = 10 * 60_000;
/** Activity ids remembered per conversation to drop VoiceAI Connect's re-sends. */
const MAX_ACTIVITY_IDS = 1000;

const CONVERSATION_ROUTE = /^conversation\/([^/]+)\/(activities|disconnect|keepalive)$/;
/** The conversation's WebSocket (`websocketURL`), in the WebSocket flavour. */
const WEBSOCKET_PATH = /^\/webhooks\/audiocodes\/conversation\/([^/?]+)\/websocket\/?$/;

interface Conversation {
  readonly activityIds: Set<string>;
  lastActivity: number;
  /** WebSocket flavour: where the bot's activities go, once VoiceAI Connect connected. */
  ws: WebSocket | null;
  /** WebSocket flavour: the activities still being handled, in order. */
  queue: Promise<void>;
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
 * Rasa Pro's AudiocodesInput, the AudioCodes VoiceAI Connect Bot API, below
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
 *   event (as Rasa) instead of a failure body, so the call ends with a clear cause. This is
 *   the REST flavour (`use_websocket: false`).
 * - `POST conversation/<id>/disconnect` `{reason}`: the turn `/session_end` (`{reason}`),
 *   then the conversation is forgotten; `keepalive` keeps it. An unknown conversation is 404.
 *
 * With `use_websocket` (Rasa's default) the new conversation's answer also names its
 * `websocketURL` (`conversation/<id>/websocket`): VoiceAI Connect opens that WebSocket (same
 * token; 401 without, 404 for an unknown conversation, 409 when one is open already), each
 * `activities` request is answered `{}` at once and its turns run in order in the background,
 * every bot activity sent over the socket as `{conversation, activities: [it]}` (Rasa's
 * WebsocketOutput; dropped with a warning while no socket is open).
 *
 * Conversations live in this process's memory, as in Rasa: one that sends nothing for
 * `keep_alive × keep_alive_expiration_factor` seconds is forgotten (its socket closed).
 */
export class AudiocodesConnector implements Connector {
  private static readonly log = new Logger('Connector[audiocodes]');
  readonly name = 'audiocodes';
  private readonly conversations = new Map<string, Conversation>();
  private cleanup: NodeJS.Timeout | null = null;
  private readonly wss = new WebSocketServer({ noServer: true, maxPayload: 64 * 1024 });
  private server: HttpServer | null = null;
  private readonly onUpgrade = (request: IncomingMessage, socket: Duplex, head: Buffer): void => {
    const match = WEBSOCKET_PATH.exec((request.url ?? '').split('?', 1)[0]!);
    if (match === null) return; // socket.io, jambonz, the voice gateway …
    socket.on('error', () => undefined);
    this.upgrade(request, socket, head, match[1]!);
  };

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
    this.server?.off('upgrade', this.onUpgrade);
    this.server = null;
    for (const client of this.wss.clients) client.terminate();
    this.wss.close();
  }

  /** Takes the upgrades of `conversation/<id>/websocket` (a 404 unless `use_websocket`). */
  attach(server: HttpServer): void {
    this.server = server;
    server.on('upgrade', this.onUpgrade);
  }

  private upgrade(request: IncomingMessage, socket: Duplex, head: Buffer, rawId: string): void {
    const refuse = (status: number, text: string, reason: string, message: string) => {
      const body = JSON.stringify({
        version: '1.0.0',
        status: 'failure',
        reason,
        message,
        code: status,
      });
      socket.end(
        `HTTP/1.1 ${status} ${text}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      );
    };
    if (!this.settings.useWebsocket) {
      refuse(404, 'Not Found', 'NotFound', 'The WebSocket flavour is off (use_websocket: false).');
      return;
    }
    const problem = this.tokenProblem(request.headers.authorization);
    if (problem !== null) {
      refuse(401, 'Unauthorized', 'NotAuthenticated', problem);
      return;
    }
    let id: string;
    try {
      id = decodeURIComponent(rawId);
    } catch {
      id = '';
    }
    const conversation = this.conversations.get(id);
    if (conversation === undefined) {
      refuse(404, 'Not Found', 'NotFound', 'Conversation not found');
      return;
    }
    if (conversation.ws !== null) {
      refuse(409, 'Conflict', 'Conflict', 'The conversation has a WebSocket already.');
      return;
    }
    this.wss.handleUpgrade(request, socket, head, (ws) => {
      conversation.ws = ws;
      conversation.lastActivity = this.now();
      ws.on('error', () => undefined);
      ws.on('close', () => {
        if (conversation.ws === ws) conversation.ws = null;
      });
    });
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
    const problem = this.tokenProblem(req.headers.authorization);
    if (problem !== null) throw badSignature(this.name, problem);
  }

  private tokenProblem(header: string | undefined): string | null {
    const token =
      typeof header === 'string' ? header.replace(/^(Bearer|Token)\s+/i, '').trim() : '';
    if (token === '') return 'Authentication token required.';
    if (!safeEqual(token, this.settings.token)) return 'Invalid authentication token.';
    return null;
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
    this.conversations.set(id, {
      activityIds: new Set(),
      lastActivity: this.now(),
      ws: null,
      queue: Promise.resolve(),
    });
    const path = `conversation/${encodeURIComponent(id)}`;
    return {
      activitiesURL: `${path}/activities`,
      disconnectURL: `${path}/disconnect`,
      refreshURL: `${path}/keepalive`,
      expiresSeconds: this.settings.keepAliveSeconds,
      ...(this.settings.useWebsocket ? { websocketURL: `${path}/websocket` } : {}),
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
    const activities = request.activities;
    if (!Array.isArray(activities)) {
      throw badBody(this.name, 'The request must carry "activities" (a list).');
    }
    if (this.settings.useWebsocket) {
      const output = new AudiocodesOutputChannel(undefined, (activity) =>
        this.sendOverSocket(id, conversation, activity),
      );
      conversation.queue = conversation.queue
        .then(() => this.run(id, conversation, activities, output))
        .catch((e: unknown) =>
          AudiocodesConnector.log.error(
            { conversation: id, err: (e as Error).message },
            'activities failed',
          ),
        );
      return {};
    }
    const output = new AudiocodesOutputChannel();
    await this.run(id, conversation, activities, output);
    return { conversation: id, activities: output.activities };
  }

  private sendOverSocket(id: string, conversation: Conversation, activity: JsonObject): void {
    const ws = conversation.ws;
    if (ws === null || ws.readyState !== ws.OPEN) {
      AudiocodesConnector.log.warn(
        { conversation: id },
        'no WebSocket open for the conversation; a bot activity was dropped',
      );
      return;
    }
    ws.send(JSON.stringify({ conversation: id, activities: [activity] }));
  }

  /** Each activity not seen before is one turn; a failed turn adds a `hangup` event. */
  private async run(
    id: string,
    conversation: Conversation,
    activities: readonly unknown[],
    output: AudiocodesOutputChannel,
  ): Promise<void> {
    for (const activity of activities) {
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
      this.forget(id);
    }
  }

  private forget(id: string): void {
    this.conversations.get(id)?.ws?.close(1000, 'conversation ended');
    this.conversations.delete(id);
  }

  private forgetInactive(): void {
    const limit = this.settings.keepAliveSeconds * this.settings.keepAliveExpirationFactor * 1000;
    const now = this.now();
    for (const [id, conversation] of this.conversations) {
      if (now - conversation.lastActivity > limit) {
        AudiocodesConnector.log.warn({ conversation: id }, 'conversation inactive; forgotten');
        this.forget(id);
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
