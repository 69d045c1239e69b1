import {
  BrokenCircuitError,
  CircuitState,
  circuitBreaker,
  handleWhen,
  type CircuitBreakerPolicy,
  type IBreaker,
} from 'cockatiel';

/** When the circuit to the action server opens and when it tries again. */
export interface CircuitOptions {
  /** Share of failed calls in the window that opens the circuit (0.5: half or more). */
  readonly failureRatio: number;
  /** Fewest calls in the window before the ratio counts. */
  readonly minimumCalls: number;
  /** Length of the sliding window, in ms. */
  readonly windowMs: number;
  /** How long the circuit stays open before one trial call is let through (half-open), in ms. */
  readonly halfOpenAfterMs: number;
}

export const DEFAULT_CIRCUIT: CircuitOptions = {
  failureRatio: 0.5,
  minimumCalls: 10,
  windowMs: 10_000,
  halfOpenAfterMs: 30_000,
};

/** The circuit's state as the `parley_circuit_state` gauge shows it. */
export type CircuitStateName = 'closed' | 'open' | 'half-open';

/** What a call to the action server ended with. */
export type ActionCallOutcome = 'success' | 'failure' | 'short_circuited';

/**
 * Where the action server client reports its calls and circuit changes (metrics live outside the
 * core: the engine module implements this with Prometheus).
 */
export interface ActionServerObserver {
  /** A call finished (`short_circuited`: refused by the open circuit, never sent). */
  callFinished(target: string, seconds: number, outcome: ActionCallOutcome): void;
  circuitChanged(target: string, state: CircuitStateName): void;
}

/**
 * A count of calls over a sliding time window: opens when at least `minimumCalls` calls fell in
 * the last `windowMs` and at least `failureRatio` of them failed. (cockatiel's SamplingBreaker
 * counts a rate, not calls, and opens only above the ratio.)
 */
export class WindowBreaker implements IBreaker {
  private calls: { at: number; ok: boolean }[] = [];

  constructor(
    private readonly options: CircuitOptions,
    private readonly now: () => number = Date.now,
  ) {}

  get state(): unknown {
    return { calls: this.calls };
  }

  set state(value: unknown) {
    this.calls = (value as { calls: { at: number; ok: boolean }[] }).calls;
  }

  success(state: CircuitState): void {
    // A trial call that succeeds closes the circuit with a fresh window.
    if (state === CircuitState.HalfOpen) this.calls = [];
    this.push(true);
  }

  failure(state: CircuitState): boolean {
    this.push(false);
    if (state !== CircuitState.Closed) return true;
    if (this.calls.length < this.options.minimumCalls) return false;
    const failed = this.calls.filter((c) => !c.ok).length;
    return failed >= this.options.failureRatio * this.calls.length;
  }

  private push(ok: boolean): void {
    const now = this.now();
    const from = now - this.options.windowMs;
    let drop = 0;
    while (drop < this.calls.length && this.calls[drop]!.at <= from) drop++;
    if (drop > 0) this.calls.splice(0, drop);
    this.calls.push({ at: now, ok });
  }
}

/** An error the circuit counts as a failure of the action server (unreachable, timeout, 5xx). */
export interface CountsAgainstCircuit {
  readonly countsAgainstCircuit: true;
}

function countsAgainstCircuit(error: unknown): boolean {
  return (
    typeof error === 'object' &&
    error !== null &&
    (error as Partial<CountsAgainstCircuit>).countsAgainstCircuit === true
  );
}

const STATE_NAMES: Record<CircuitState, CircuitStateName> = {
  [CircuitState.Closed]: 'closed',
  [CircuitState.Open]: 'open',
  [CircuitState.HalfOpen]: 'half-open',
  [CircuitState.Isolated]: 'open',
};

/**
 * The circuit breaker of one action server (cockatiel's policy with a {@link WindowBreaker}).
 * `run` throws {@link CircuitOpenError} at once while the circuit is open (and, half-open,
 * for every call but the one trial call).
 */
export class ActionCircuit {
  private readonly policy: CircuitBreakerPolicy;

  constructor(
    readonly target: string,
    options: CircuitOptions,
    private readonly observer: ActionServerObserver | null,
  ) {
    this.policy = circuitBreaker(handleWhen(countsAgainstCircuit), {
      halfOpenAfter: options.halfOpenAfterMs,
      breaker: new WindowBreaker(options),
    });
    this.policy.onStateChange((state) => observer?.circuitChanged(target, STATE_NAMES[state]));
    observer?.circuitChanged(target, 'closed');
  }

  get state(): CircuitStateName {
    return STATE_NAMES[this.policy.state];
  }

  async run<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await this.policy.execute(fn);
    } catch (error) {
      if (error instanceof BrokenCircuitError) {
        this.observer?.callFinished(this.target, 0, 'short_circuited');
        throw new CircuitOpenError(this.target);
      }
      throw error;
    }
  }
}

/** The call was not sent: the circuit to the action server is open. */
export class CircuitOpenError extends Error {
  constructor(readonly target: string) {
    super(`the circuit to the action server at ${target} is open after repeated failures`);
    this.name = 'CircuitOpenError';
  }
}
