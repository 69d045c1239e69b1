import { counter, gauge, histogram } from 'src/platform/metrics/registry';

/**
 * Parley's own metrics in the process registry (README "Operations"). Getters, so that every
 * app instance of a test process shares the one registered metric.
 */
export const parleyMetrics = {
  turns: () =>
    counter('parley_turns_total', 'Conversation turns, by channel and outcome', [
      'channel',
      'outcome',
    ]),
  turnDuration: () =>
    histogram(
      'parley_turn_duration_seconds',
      'Duration of a conversation turn, lock wait and listeners included',
    ),
  trackerStoreQuery: () =>
    histogram('parley_tracker_store_query_seconds', 'Duration of tracker store calls, by call', [
      'op',
    ]),
  modelLoaded: () =>
    gauge('parley_model_loaded_info', 'The model served now (value 1), by model id', ['model_id']),
  actionServerRequest: () =>
    histogram(
      'parley_action_server_request_duration_seconds',
      'Duration of calls to the custom action server',
      ['target', 'outcome'],
    ),
  /** Driven by the action server's circuit breaker: 0 closed, 1 open, 2 half-open. */
  circuitState: () =>
    gauge(
      'parley_circuit_state',
      'State of the circuit breaker to a dependency (0 closed, 1 open, 2 half-open)',
      ['target'],
    ),
};

/** Registers every Parley metric, so a scrape names them all even before they move. */
export function registerParleyMetrics(): void {
  for (const make of Object.values(parleyMetrics)) make();
}

/** A channel name as a label value: short lower-case words only, anything else `other`. */
export function channelLabel(channel: string): string {
  return /^[a-z][a-z0-9_-]{0,31}$/.test(channel) ? channel : 'other';
}
