import {
  BeforeApplicationShutdown,
  Injectable,
  Logger,
  OnApplicationBootstrap,
} from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';

/** How long requests in flight may take to finish once shutdown begins (`app.close()` alone). */
export const DRAIN_TIMEOUT_MS = 10_000;

/**
 * Graceful shutdown of the HTTP server. Nest closes the pools after the server, but its server
 * close waits on open keep-alive connections for as long as they last; this drain runs first:
 * it stops accepting connections, closes idle ones, lets the requests in flight finish (at
 * most DRAIN_TIMEOUT_MS) and only then cuts what is left — so no request meets a closed pool.
 */
@Injectable()
export class HttpDrain implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('Shutdown');
  private server: Server | null = null;
  private inFlight = 0;
  private idle: (() => void) | null = null;
  private drainingSince: number | null = null;
  private drained: Promise<void> | null = null;

  constructor(private readonly adapterHost: HttpAdapterHost) {}

  /** True once shutdown has begun: the instance is no longer ready for traffic. */
  get draining(): boolean {
    return this.drainingSince !== null;
  }

  onApplicationBootstrap(): void {
    const server = this.adapterHost.httpAdapter?.getHttpServer() as Server | undefined;
    if (server === undefined) return;
    this.server = server;
    // Prepended: counted before any other listener can answer the request.
    server.prependListener('request', (_req: IncomingMessage, res: ServerResponse) => {
      this.inFlight++;
      // Requests that still come in on an open connection are served, and the connection closed.
      if (this.draining) res.setHeader('Connection', 'close');
      res.once('close', () => {
        this.inFlight--;
        if (this.inFlight === 0) this.idle?.();
      });
    });
  }

  /** Readiness fails from now on; the listener still serves (the load balancer's time to react). */
  beginShutdown(): void {
    this.drainingSince ??= Date.now();
  }

  /**
   * Nest's hook, for an `app.close()` without `parley run`'s shutdown (tests): the same drain
   * with the default timeout. After `drain()` already ran it does nothing.
   */
  async beforeApplicationShutdown(): Promise<void> {
    await this.drain(DRAIN_TIMEOUT_MS);
  }

  /**
   * Stops accepting connections, closes idle keep-alive ones, waits (at most `timeoutMs`) for
   * the requests in flight, then closes what is left. Idempotent.
   */
  drain(timeoutMs: number): Promise<void> {
    this.drained ??= this.run(timeoutMs);
    return this.drained;
  }

  private async run(timeoutMs: number): Promise<void> {
    this.beginShutdown();
    const server = this.server;
    if (server === null) return;
    const since = this.drainingSince ?? Date.now();
    server.close();
    server.closeIdleConnections();
    if (this.inFlight > 0) {
      this.logger.log({ inFlight: this.inFlight }, 'waiting for requests in flight');
      let timer: NodeJS.Timeout | undefined;
      await new Promise<void>((resolve) => {
        this.idle = resolve;
        timer = setTimeout(resolve, timeoutMs);
      });
      clearTimeout(timer);
      this.idle = null;
      if (this.inFlight > 0) {
        this.logger.warn(
          { inFlight: this.inFlight, waitedMs: Date.now() - since },
          'requests still in flight after the drain timeout; closing their connections',
        );
      }
    }
    server.closeAllConnections();
  }
}
