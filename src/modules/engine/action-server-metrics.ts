import { type ActionCallOutcome, type ActionServerObserver, type CircuitStateName } from 'src/core';
import { gauge, histogram } from 'src/platform/metrics/registry';

const STATE_VALUE: Record<CircuitStateName, number> = { closed: 0, open: 1, 'half-open': 2 };

/**
 * The action server client's calls and circuit as Prometheus metrics:
 * `parley_action_server_request_duration_seconds{target, outcome}` (histogram; calls refused by
 * the open circuit are counted under `short_circuited`) and `parley_circuit_state{target}`
 * (0 closed, 1 open, 2 half-open).
 */
export function actionServerMetrics(): ActionServerObserver {
  const duration = histogram(
    'parley_action_server_request_duration_seconds',
    'Duration of calls to the custom action server',
    ['target', 'outcome'],
  );
  const state = gauge(
    'parley_circuit_state',
    'State of the circuit breaker to a dependency (0 closed, 1 open, 2 half-open)',
    ['target'],
  );
  return {
    callFinished(target: string, seconds: number, outcome: ActionCallOutcome): void {
      duration.observe({ target, outcome }, seconds);
    },
    circuitChanged(target: string, s: CircuitStateName): void {
      state.set({ target }, STATE_VALUE[s]);
    },
  };
}
