import { Inject, Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { DialogueError } from 'src/core';
import { APP_CONFIG, type AppConfig } from 'src/platform/config/app-config';
import { readModelServerEndpoint } from './endpoints-models';
import { type ModelServerConfig } from './model-server-client';
import { ModelStore } from './model-store.service';

/** Longest wait between pulls after repeated failures. */
export const MAX_BACKOFF_SECONDS = 3600;

/**
 * Seconds until the next pull: the interval after a success (or "no new model"), doubled per
 * consecutive failure, capped at 8 intervals or an hour, whichever is larger than the interval.
 */
export function nextPullDelaySeconds(intervalSeconds: number, failures: number): number {
  if (failures <= 0) return intervalSeconds;
  const cap = Math.max(intervalSeconds, Math.min(intervalSeconds * 8, MAX_BACKOFF_SECONDS));
  return Math.min(intervalSeconds * 2 ** failures, cap);
}

/** What one pull did. */
export type PullOutcome = 'loaded' | 'unchanged' | 'failed';

/**
 * Polls the model server of endpoints.yml `models:` (or of a `PUT /model` `model_server` with a
 * `wait_time_between_pulls`): GET with `If-None-Match` = ETag of the served model; 200 + ETag →
 * verified and swapped in; 304/204/404 → keep; errors, timeouts and bad archives keep the served
 * model, are logged, and back the next pull off exponentially.
 */
@Injectable()
export class ModelServerPoller implements OnApplicationShutdown {
  private readonly logger = new Logger(ModelServerPoller.name);
  private timer: NodeJS.Timeout | null = null;
  private server: ModelServerConfig | null = null;
  private failures = 0;
  private generation = 0;
  /** Counters, for logs and tests. */
  readonly stats = { pulls: 0, loaded: 0, unchanged: 0, failed: 0 };

  constructor(
    private readonly store: ModelStore,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** At start: the first pull is awaited; polling continues in the background. */
  async startFromEndpoints(): Promise<void> {
    const file = this.config.files.endpoints;
    if (file === null) return;
    const server = readModelServerEndpoint(file);
    if (server === null) return;
    await this.start(server);
  }

  /** (Re)starts polling `server`: pulls once now, then every `wait_time_between_pulls` s. */
  async start(server: ModelServerConfig): Promise<PullOutcome> {
    this.stop();
    this.server = server;
    this.failures = 0;
    const generation = ++this.generation;
    const outcome = await this.pullOnce();
    if (generation === this.generation) this.schedule(generation);
    return outcome;
  }

  /** Polls `server` from now on, its first pull after one interval (a PUT just pulled it). */
  follow(server: ModelServerConfig): void {
    this.stop();
    this.server = server;
    this.failures = 0;
    this.schedule(++this.generation);
  }

  stop(): void {
    this.generation++;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    this.server = null;
  }

  onApplicationShutdown(): void {
    this.stop();
  }

  private schedule(generation: number): void {
    const interval = this.server?.waitTimeBetweenPulls ?? null;
    if (interval === null || interval <= 0) return;
    const delay = nextPullDelaySeconds(interval, this.failures);
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.pullOnce().then(() => {
        if (generation === this.generation) this.schedule(generation);
      });
    }, delay * 1000);
    this.timer.unref();
  }

  /** One pull; never throws. */
  async pullOnce(): Promise<PullOutcome> {
    const server = this.server;
    if (server === null) return 'unchanged';
    this.stats.pulls++;
    try {
      const { assistant, etag } = await this.store.pull(server);
      if (server !== this.server) return 'unchanged';
      this.store.swap(assistant, 'model_server', etag);
      this.failures = 0;
      this.stats.loaded++;
      return 'loaded';
    } catch (e) {
      const status = e instanceof DialogueError ? e.details['status'] : undefined;
      if (status === 304 || status === 204 || status === 404) {
        this.failures = 0;
        this.stats.unchanged++;
        this.logger.debug({ url: server.url, status }, 'model server: no new model');
        return 'unchanged';
      }
      this.failures++;
      this.stats.failed++;
      this.logger.warn(
        {
          url: server.url,
          error: e instanceof Error ? e.message : String(e),
          failures: this.failures,
          nextPullSeconds:
            server.waitTimeBetweenPulls === null || server.waitTimeBetweenPulls <= 0
              ? null
              : nextPullDelaySeconds(server.waitTimeBetweenPulls, this.failures),
        },
        'model server pull failed; keeping the current model',
      );
      return 'failed';
    }
  }
}
