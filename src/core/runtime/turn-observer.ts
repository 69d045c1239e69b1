/** How a turn ended, as metrics count it. */
export type TurnOutcome = 'success' | 'error';

/** What is known of a turn when it starts. */
export interface TurnStart {
  /** The input channel of a user message (`rest`, `socketio`, …); `api` for the HTTP routes; `reminder`. */
  readonly channel: string;
}

/**
 * Port: told when a turn starts and how it ends (committed or failed), for metrics. The
 * runtime calls `turnStarted` before taking the lock and the returned function once, when the
 * turn is committed or has failed. Optional: the runtime works without one.
 */
export abstract class TurnObserver {
  abstract turnStarted(turn: TurnStart): (outcome: TurnOutcome) => void;
}
