import { Counter, Gauge, Histogram, Registry } from 'prom-client';

/**
 * The process's one Prometheus registry: every module registers its metrics here and
 * `GET /metrics` renders it. The helpers return the metric already registered under a name, so
 * two providers (or two app instances in one test process) share it instead of failing on a
 * duplicate registration.
 */
export const metricsRegistry = new Registry();

function existing<T>(name: string): T | undefined {
  return metricsRegistry.getSingleMetric(name) as T | undefined;
}

export function counter(name: string, help: string, labelNames: readonly string[] = []): Counter {
  return (
    existing<Counter>(name) ??
    new Counter({ name, help, labelNames: [...labelNames], registers: [metricsRegistry] })
  );
}

export function gauge(name: string, help: string, labelNames: readonly string[] = []): Gauge {
  return (
    existing<Gauge>(name) ??
    new Gauge({ name, help, labelNames: [...labelNames], registers: [metricsRegistry] })
  );
}

export function histogram(
  name: string,
  help: string,
  labelNames: readonly string[] = [],
  buckets: readonly number[] = [
    0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10,
  ],
): Histogram {
  return (
    existing<Histogram>(name) ??
    new Histogram({
      name,
      help,
      labelNames: [...labelNames],
      buckets: [...buckets],
      registers: [metricsRegistry],
    })
  );
}
