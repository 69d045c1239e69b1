import { Clock } from 'src/core/ports/clock';

/** A Clock for tests: returns a set time, optionally advancing by `step` on every call. */
export class FixedClock extends Clock {
  constructor(
    private current: number,
    private readonly step = 0,
  ) {
    super();
  }

  now(): number {
    const value = this.current;
    this.current += this.step;
    return value;
  }

  /** Sets the time returned next. */
  set(time: number): void {
    this.current = time;
  }

  /** Moves the time forward by `seconds`. */
  advance(seconds: number): void {
    this.current += seconds;
  }
}
