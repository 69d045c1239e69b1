/**
 * Metrics a module renders itself in the Prometheus text format (the voice connector's
 * `parley_voice_*`), appended to `GET /metrics` after the registry. Keyed by name: a source
 * registered again (a second app in one test process) replaces the first.
 */
const sources = new Map<string, () => string>();

export function registerMetricsText(name: string, render: () => string): void {
  sources.set(name, render);
}

export function renderMetricsTexts(): string {
  return [...sources.values()].map((render) => render()).join('');
}
