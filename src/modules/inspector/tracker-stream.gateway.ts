import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
  Optional,
} from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { TrackerStreamHub } from 'src/core';
import { APP_CONFIG, type AppConfig } from 'src/platform/config/app-config';
import { type WebSocket, WebSocketServer } from 'ws';
import { InspectorPages } from './inspector-pages';

/** A `retrieve` frame is a few hundred bytes; anything over this closes the socket (1009). */
export const MAX_STREAM_FRAME_BYTES = 16 * 1024;
/** Open tracker_stream sockets at most; more are answered 503. */
export const MAX_STREAM_SOCKETS = 256;

const STREAM_PATH = /^\/webhooks\/([^/?]+)\/tracker_stream\/?$/;

/**
 * `WS /webhooks/<channel>/tracker_stream` on the HTTP server's port: a plain `ws` server in
 * `noServer` mode that answers only upgrades for that path and leaves the others (socket.io,
 * the voice connector) alone. Without --inspect, or for a channel without a page, it answers
 * 404. With an auth token (`--auth-token`) the socket needs `?token=<it>` (401 otherwise); a
 * server with only a JWT secret refuses the stream (a browser WebSocket cannot send a Bearer
 * header). Frames go to core's TrackerStreamHub.
 */
@Injectable()
export class TrackerStreamGateway implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('Inspector');
  private readonly wss = new WebSocketServer({
    noServer: true,
    maxPayload: MAX_STREAM_FRAME_BYTES,
    perMessageDeflate: false,
  });
  private server: Server | null = null;
  private readonly onUpgrade = (request: IncomingMessage, socket: Duplex, head: Buffer): void => {
    try {
      this.upgrade(request, socket, head);
    } catch (error) {
      this.logger.warn({ err: (error as Error).message }, 'tracker_stream upgrade failed');
      socket.destroy();
    }
  };

  private upgrade(request: IncomingMessage, socket: Duplex, head: Buffer): void {
    const path = (request.url ?? '/').split('?', 1)[0] ?? '/';
    const match = STREAM_PATH.exec(path);
    if (match === null) return; // not ours
    socket.on('error', () => undefined);
    const url = new URL(request.url ?? '/', 'http://localhost');
    const channel = match[1] ?? '';
    const hub = this.hub;
    if (hub == null || this.pages == null || !this.pages.has(channel)) {
      refuse(socket, 404, 'Not Found');
      return;
    }
    if (!this.authorized(url.searchParams.get('token'))) {
      refuse(socket, 401, 'Unauthorized');
      return;
    }
    if (this.wss.clients.size >= MAX_STREAM_SOCKETS) {
      refuse(socket, 503, 'Service Unavailable');
      return;
    }
    this.wss.handleUpgrade(request, socket, head, (ws: WebSocket) => {
      const connection = hub.connect({
        send: (text) => ws.send(text),
        close: (code, reason) => ws.close(code, reason),
        buffered: () => ws.bufferedAmount,
      });
      // Oversized or malformed frames: ws closes the socket itself (1009, 1007) and reports here.
      ws.on('error', () => undefined);
      ws.on('message', (data: Buffer, isBinary: boolean) => {
        if (isBinary) connection.onBinary();
        else connection.onText(data.toString('utf8'));
      });
      ws.on('close', () => connection.onClose());
    });
  }

  constructor(
    private readonly adapterHost: HttpAdapterHost,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    // Absent (undefined) without --inspect.
    @Optional() private readonly hub?: TrackerStreamHub,
    @Optional() private readonly pages?: InspectorPages,
  ) {}

  onApplicationBootstrap(): void {
    this.server = this.adapterHost.httpAdapter.getHttpServer() as Server;
    this.server.on('upgrade', this.onUpgrade);
    if (
      this.hub != null &&
      this.config.auth.token === null &&
      this.config.auth.jwtSecret !== null
    ) {
      this.logger.warn(
        'the inspector tracker_stream needs --auth-token when the server has only a JWT secret; it refuses every socket',
      );
    }
  }

  /** Before the HTTP server closes (it would wait for upgraded sockets). */
  onModuleDestroy(): void {
    this.server?.off('upgrade', this.onUpgrade);
    for (const client of this.wss.clients) client.terminate();
    this.wss.close();
  }

  private authorized(given: string | null): boolean {
    const { token, jwtSecret } = this.config.auth;
    if (token === null) return jwtSecret === null;
    if (given === null) return false;
    const a = Buffer.from(given);
    const b = Buffer.from(token);
    return a.length === b.length && timingSafeEqual(a, b);
  }
}

function refuse(socket: Duplex, status: number, text: string): void {
  socket.end(`HTTP/1.1 ${status} ${text}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`);
}
