import { Controller, Get, Inject, Req, Res } from '@nestjs/common';
import { SkipThrottle } from '@nestjs/throttler';
import type { Request, Response } from 'express';
import { timingSafeEqual } from 'node:crypto';
import { AssistantSource, DialogueError } from 'src/core';
import { Public } from 'src/platform/auth/public.decorator';
import { APP_CONFIG, DEFAULT_OPERATIONS, type AppConfig } from 'src/platform/config/app-config';
import { metricsRegistry } from 'src/platform/metrics/registry';
import { renderMetricsTexts } from 'src/platform/metrics/text-sources';
import { parleyMetrics } from './parley-metrics';

/**
 * `GET /metrics`: the process registry in the Prometheus text format. Open like any Prometheus
 * target unless `PARLEY_METRICS_TOKEN` is set (then `Authorization: Bearer <token>`); outside
 * the API's auth (`--auth-token` / JWT) and the rate limits, so a scraper never needs an API
 * credential nor gets throttled.
 */
@Controller('metrics')
@Public()
@SkipThrottle()
export class MetricsController {
  private readonly token: Buffer | null;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly assistants: AssistantSource,
  ) {
    const token = (config.operations ?? DEFAULT_OPERATIONS).metricsToken;
    this.token = token === null ? null : Buffer.from(token);
  }

  @Get()
  async scrape(@Req() req: Request, @Res({ passthrough: true }) res: Response): Promise<string> {
    this.authorize(req.headers.authorization);
    res.setHeader('Content-Type', metricsRegistry.contentType);
    res.setHeader('Cache-Control', 'no-store');
    const model = parleyMetrics.modelLoaded();
    model.reset();
    const loaded = this.assistants.current();
    if (loaded !== null) model.set({ model_id: loaded.modelId }, 1);
    return (await metricsRegistry.metrics()) + renderMetricsTexts();
  }

  private authorize(header: string | undefined): void {
    if (this.token === null) return;
    const given = /^Bearer (.+)$/i.exec(header ?? '')?.[1];
    const ok =
      given !== undefined &&
      Buffer.byteLength(given) === this.token.length &&
      timingSafeEqual(Buffer.from(given), this.token);
    if (!ok) throw new DialogueError('AUTH.NOT_AUTHENTICATED', 'User is not authenticated.');
  }
}
