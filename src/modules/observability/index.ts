// The observability module's public surface: other modules import from here only.
export { instrumentActionServer, instrumentTrackerStore } from './instrument';
export { ObservabilityModule } from './observability.module';
export { channelLabel, parleyMetrics } from './parley-metrics';
export { PrometheusTurnObserver } from './prometheus-turn-observer';
export { OtelTracer, createOtelTracer } from './tracing/otel-tracer';
export { tracingSettingsOf, type TracingSettings } from './tracing/tracing-settings';
