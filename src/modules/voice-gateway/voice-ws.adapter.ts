import {
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { type WebSocket, WebSocketServer } from 'ws';
import { VoiceAuthService } from './voice-auth.service';
import { VoiceGatewayService } from './voice-gateway.service';
import { VoiceMetrics } from './voice-metrics';

export const GENESYS_WS_PATH = '/webhooks/genesys/websocket';

/**
 * The voice WebSocket on the HTTP server's own port. Nest's `WsAdapter` destroys every upgrade
 * no gateway owns (it would kill socket.io and GraphQL subscriptions) and drops binary frames, and
 * an application has only one WebSocket adapter slot — so this adapter is a plain `ws` server in
 * `noServer` mode that answers only upgrades for its path, authenticates them before the
 * handshake (401 on failure) and hands text and binary frames to the session untouched. Upgrades
 * for any other path are left for their own listeners.
 */
@Injectable()
export class VoiceWsAdapter implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(VoiceWsAdapter.name);
  // Text messages up to 64 KiB are allowed; larger ones must reach the session so it can answer
  // with a clear `disconnect` instead of a bare close 1009.
  private readonly wss = new WebSocketServer({ noServer: true, maxPayload: 1024 * 1024 });
  private server: Server | null = null;
  private readonly onUpgrade = (request: IncomingMessage, socket: Duplex, head: Buffer): void => {
    if (!isVoicePath(request.url)) return; // not ours: leave it to socket.io, GraphQL, ...
    socket.on('error', () => undefined);
    void this.accept(request, socket, head);
  };

  constructor(
    private readonly adapterHost: HttpAdapterHost,
    private readonly auth: VoiceAuthService,
    private readonly gateway: VoiceGatewayService,
    private readonly metrics: VoiceMetrics,
  ) {}

  onApplicationBootstrap(): void {
    this.server = this.adapterHost.httpAdapter.getHttpServer() as Server;
    this.server.on('upgrade', this.onUpgrade);
    this.logger.log(`voice connector listening on ${GENESYS_WS_PATH}`);
  }

  /** Before the HTTP server closes (it would wait for upgraded sockets). */
  onModuleDestroy(): void {
    this.server?.off('upgrade', this.onUpgrade);
    for (const client of this.wss.clients) client.terminate();
    this.wss.close();
  }

  private async accept(request: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    const outcome = await this.auth.authenticate(request);
    if (socket.destroyed) return;
    if (!outcome.ok) {
      this.metrics.refusedConnectionsTotal++;
      const body = JSON.stringify({
        version: '1.0.0',
        status: 'failure',
        reason: 'NotAuthenticated',
        message: 'Voice connection refused: authentication failed.',
        code: 401,
      });
      socket.end(
        `HTTP/1.1 401 Unauthorized\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      );
      return;
    }
    this.wss.handleUpgrade(request, socket, head, (ws: WebSocket) =>
      this.gateway.connect(ws, outcome),
    );
  }
}

function isVoicePath(url: string | undefined): boolean {
  if (url === undefined) return false;
  const path = url.split('?', 1)[0] ?? '';
  return path === GENESYS_WS_PATH || path === `${GENESYS_WS_PATH}/`;
}
