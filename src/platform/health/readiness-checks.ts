import { Injectable } from '@nestjs/common';

/** What a readiness check found; it throws (or times out) when the dependency is down. */
export type ReadinessDetails = Record<string, unknown>;

interface Registered {
  readonly check: () => Promise<ReadinessDetails | void>;
  /** A failing critical check makes the instance not ready (503); others only warn. */
  readonly critical: boolean;
  readonly timeoutMs: number;
}

/** The outcome of one check as `/health/ready` reports it. */
export interface CheckOutcome {
  readonly up: boolean;
  readonly critical: boolean;
  readonly details: ReadinessDetails;
}

/** Default time a check may take before it counts as down. */
export const DEFAULT_CHECK_TIMEOUT_MS = 1000;

/**
 * The checks `/health/ready` runs besides the database ping: modules register theirs at start
 * (the lock store, the loaded model, a broker as a warning). Global, one per application.
 *
 * One run of a check at a time: a probe that comes while the check is still running (also past
 * its timeout) waits for that run instead of starting another. Otherwise frequent probes
 * against a slow dependency pile up work behind each other (the lock store check queues on one
 * lock id) and readiness stays down long after the dependency is back.
 */
@Injectable()
export class ReadinessChecks {
  private readonly checks = new Map<string, Registered>();
  private readonly running = new Map<string, Promise<ReadinessDetails | void>>();

  register(
    name: string,
    check: () => Promise<ReadinessDetails | void>,
    options: { critical: boolean; timeoutMs?: number },
  ): void {
    this.checks.set(name, {
      check,
      critical: options.critical,
      timeoutMs: options.timeoutMs ?? DEFAULT_CHECK_TIMEOUT_MS,
    });
  }

  names(): string[] {
    return [...this.checks.keys()];
  }

  /** Runs one check with its timeout; a failure becomes `up: false` with the reason. */
  async run(name: string): Promise<CheckOutcome> {
    const entry = this.checks.get(name);
    if (entry === undefined) return { up: false, critical: true, details: { reason: 'unknown' } };
    let timer: NodeJS.Timeout | undefined;
    try {
      const details = await Promise.race([
        this.runOnce(name, entry),
        new Promise<never>((_, reject) => {
          timer = setTimeout(
            () => reject(new Error(`no answer within ${entry.timeoutMs} ms`)),
            entry.timeoutMs,
          );
        }),
      ]);
      return { up: true, critical: entry.critical, details: details ?? {} };
    } catch (error) {
      return {
        up: false,
        critical: entry.critical,
        details: { message: (error as Error).message },
      };
    } finally {
      clearTimeout(timer);
    }
  }

  /** The check's run in progress, or a new one (forgotten once it settles). */
  private runOnce(name: string, entry: Registered): Promise<ReadinessDetails | void> {
    const current = this.running.get(name);
    if (current !== undefined) return current;
    let run: Promise<ReadinessDetails | void>;
    try {
      run = Promise.resolve(entry.check());
    } catch (error) {
      run = Promise.reject(error instanceof Error ? error : new Error(String(error)));
    }
    this.running.set(name, run);
    const forget = (): void => {
      if (this.running.get(name) === run) this.running.delete(name);
    };
    run.then(forget, forget);
    return run;
  }
}
