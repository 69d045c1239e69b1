import { Inject, Module, OnModuleInit } from '@nestjs/common';
import { AssistantSource } from 'src/core';
import { ModelModule } from 'src/modules/model';
import { APP_CONFIG, DEFAULT_OPERATIONS, type AppConfig } from 'src/platform/config/app-config';
import { ReadinessChecks } from 'src/platform/health/readiness-checks';
import { collectProcessMetrics } from 'src/platform/metrics/http-metrics';
import { MetricsController } from './metrics.controller';
import { registerParleyMetrics } from './parley-metrics';

/**
 * Operations: `GET /metrics` (the process registry, with Node's defaults and Parley's metrics
 * registered at start) and the `model` readiness check.
 */
@Module({ imports: [ModelModule], controllers: [MetricsController] })
export class ObservabilityModule implements OnModuleInit {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly assistants: AssistantSource,
    private readonly readiness: ReadinessChecks,
  ) {}

  onModuleInit(): void {
    collectProcessMetrics();
    registerParleyMetrics();
    const required = (this.config.operations ?? DEFAULT_OPERATIONS).readyRequiresModel;
    this.readiness.register(
      'model',
      () => {
        const loaded = this.assistants.current();
        if (loaded === null && required) return Promise.reject(new Error('no model loaded'));
        return Promise.resolve(
          loaded === null ? { loaded: false } : { loaded: true, model_id: loaded.modelId },
        );
      },
      { critical: true },
    );
  }
}
