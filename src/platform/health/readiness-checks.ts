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
 */
@Injectable()
export class ReadinessChecks {
  private readonly checks = new Map<string, Registered>();

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
        entry.check(),
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
}
