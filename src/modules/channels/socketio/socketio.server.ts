import { Logger } from '@nestjs/common';
import { type Algorithm, verify } from 'jsonwebtoken';
import { randomUUID } from 'node:crypto';
import type { Server as HttpServer } from 'node:http';
import type * as SocketIo from 'socket.io';
import type { Namespace, Server, Socket } from 'socket.io';
import {
  conversationIdProblem,
  DialogueError,
  requireConversationId,
  requireUserText,
} from 'src/core';
import { type ChannelInput } from 'src/modules/channels/input/channel-input';
import { failureBody } from 'src/platform/errors/failure-body';
import { failureOf } from 'src/platform/errors/failure-of';
import { MAX_JSON_DEPTH, valueDeeperThan } from 'src/platform/http/body-parser.middleware';
import { type SocketIoSettings } from './socketio-config';
import { SocketIoOutputChannel } from './socketio.output-channel';

/** Event carrying the failure body of a user message that was not handled (not stored). */
export const MESSAGE_ERROR_EVENT = 'message_error';

/**
 * Rasa's SocketIOInput on Parley's HTTP server: a socket.io server at `socketio_path`
 * (default `/socket.io`) speaking the protocol of the `rasa-webchat` widget —
 * `session_request` → `session_confirm`, `user_message_evt` (default `user_uttered`) in,
 * `bot_message_evt` (default `bot_uttered`) out. Upgrades for other paths are left alone
 * (`destroyUpgrade: false`), so other WebSocket routes can share the server.
 *
 * Input the REST routes would answer with a 400 is refused with the same failure body, emitted
 * to the socket: a `session_id` that breaks the conversation id rules → `session_error`, and the
 * session is confirmed with a new id instead (rasa-webchat adopts a confirmed id that differs
 * from the one it asked for). A user message that was not handled, so not stored — text over
 * the limit, invalid `session_id`, metadata nested too deep, the database unavailable — gets
 * `message_error` with the failure body (Rasa sends nothing at all).
 */
export class SocketIoServer {
  private readonly log = new Logger('SocketIoChannel');
  private io: Server | null = null;
  private namespace: Namespace | null = null;

  constructor(
    private readonly settings: SocketIoSettings,
    /** The input contract; it does not log failed turns: they are logged and emitted here. */
    private readonly input: ChannelInput,
    private readonly cors: readonly string[],
    private readonly maxTextLength: number,
  ) {}

  attach(server: HttpServer): void {
    // socket.io loads only when the channel is configured (start-up time).
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- see above
    const { Server: IoServer } = require('socket.io') as typeof SocketIo;
    const io = new IoServer(server, {
      path: this.settings.socketioPath,
      serveClient: false,
      destroyUpgrade: false,
      ...(this.cors.length > 0
        ? { cors: { origin: this.cors.includes('*') ? true : [...this.cors], credentials: true } }
        : {}),
    });
    this.io = io;
    const nsp = io.of(this.settings.namespace ?? '/');
    this.namespace = nsp;
    if (this.settings.jwtKey !== null) {
      const key = this.settings.jwtKey;
      const algorithm = this.settings.jwtMethod as Algorithm;
      nsp.use((socket, next) => {
        const auth = socket.handshake.auth as Record<string, unknown> | undefined;
        const token =
          typeof auth?.token === 'string' ? auth.token.replace(/^Bearer\s+/i, '') : null;
        try {
          if (token === null) throw new Error('no token');
          verify(token, key, { algorithms: [algorithm] });
          next();
        } catch {
          this.log.debug(
            { socket: socket.id },
            'socket.io connection refused: missing or invalid JWT',
          );
          next(new Error('not authorized'));
        }
      });
    }
    nsp.on('connection', (socket) => this.onConnection(socket));
  }

  /** The output channel for `output_channel=socketio` (Rasa's get_output_channel). */
  outputChannel(): SocketIoOutputChannel | null {
    return this.namespace === null
      ? null
      : new SocketIoOutputChannel(this.namespace, this.settings.botMessageEvt);
  }

  /** Disconnects every client and stops engine.io, leaving the HTTP server to its owner. */
  close(): void {
    if (this.io === null) return;
    this.io.disconnectSockets(true);
    this.io.engine.close();
    this.io = null;
    this.namespace = null;
  }

  private onConnection(socket: Socket): void {
    this.log.debug({ socket: socket.id }, 'User connected to socketIO endpoint');
    socket.on('disconnect', () => this.log.debug({ socket: socket.id }, 'User disconnected'));
    socket.on('session_request', (data: unknown) => {
      const request = isObject(data) ? { ...data } : {};
      let sessionId = request.session_id;
      if (typeof sessionId === 'string' && sessionId.length > 0) {
        const problem = conversationIdProblem(sessionId);
        if (problem !== null) {
          socket.emit(
            'session_error',
            failureBody(
              'REQUEST.INVALID_PARAMETER',
              `The "session_id" ${problem.message}; a new session id is confirmed instead.`,
              { parameter: 'session_id', in: 'session_request', rule: problem.rule },
            ),
          );
          sessionId = undefined;
        }
      }
      if (typeof sessionId !== 'string' || sessionId.length === 0) {
        sessionId = randomUUID().replace(/-/g, '');
      }
      if (this.settings.sessionPersistence) void socket.join(sessionId as string);
      socket.emit('session_confirm', sessionId);
    });
    socket.on(this.settings.userMessageEvt, (data: unknown) => {
      void this.onUserMessage(socket, data).catch((e: unknown) => {
        if (!(e instanceof DialogueError && e.code === 'REQUEST.INVALID_PARAMETER')) {
          this.log.warn(
            { socket: socket.id, err: (e as Error).message },
            'socket.io message could not be handled; the turn was not stored',
          );
        }
        socket.emit(MESSAGE_ERROR_EVENT, failureOf(e));
      });
    });
  }

  private async onUserMessage(socket: Socket, data: unknown): Promise<void> {
    const nsp = this.namespace;
    if (nsp === null) return;
    if (!isObject(data)) {
      this.log.warn({ socket: socket.id }, 'socket.io user message is not an object; ignored');
      return;
    }
    let senderId: string;
    if (this.settings.sessionPersistence) {
      if (typeof data.session_id !== 'string' || data.session_id.length === 0) {
        this.log.warn(
          { socket: socket.id },
          'A message without a valid session_id was received and ignored. Set a session id with the `session_request` socketIO event.',
        );
        return;
      }
      senderId = requireConversationId(data.session_id, 'session_id', this.settings.userMessageEvt);
    } else {
      senderId = socket.id;
    }
    const raw = data.message ?? '';
    if (typeof raw !== 'string') {
      this.log.warn({ socket: socket.id }, 'socket.io "message" is not a string; ignored');
      return;
    }
    const text = requireUserText(raw, this.maxTextLength, 'message', this.settings.userMessageEvt);
    let metadata: unknown = data[this.settings.metadataKey] ?? {};
    if (typeof metadata === 'string') {
      try {
        metadata = JSON.parse(metadata) as unknown;
      } catch {
        this.log.warn({ socket: socket.id }, 'socket.io metadata is not valid JSON; ignored');
        metadata = {};
      }
    }
    if (valueDeeperThan(metadata, MAX_JSON_DEPTH)) {
      throw new DialogueError(
        'REQUEST.INVALID_PARAMETER',
        `The "${this.settings.metadataKey}" nests arrays or objects deeper than the limit of ${MAX_JSON_DEPTH} levels.`,
        { parameter: this.settings.metadataKey, rule: 'max_json_depth', max_depth: MAX_JSON_DEPTH },
      );
    }
    await this.input.handleMessage({
      text,
      senderId,
      inputChannel: 'socketio',
      output: new SocketIoOutputChannel(nsp, this.settings.botMessageEvt),
      metadata: isObject(metadata) ? metadata : null,
    });
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
