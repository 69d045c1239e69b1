/**
 * Token bucket: `capacity` tokens at most, refilled at `ratePerSecond`. Genesys allows the server 5
 * binary messages per second on average and 25 at once (`global.inbound.binary.*`).
 */
export class TokenBucket {
  private tokens: number;
  private last: number;

  constructor(
    readonly ratePerSecond: number,
    readonly capacity: number,
    private readonly nowMs: () => number,
  ) {
    this.tokens = capacity;
    this.last = nowMs();
  }

  private refill(): void {
    const now = this.nowMs();
    this.tokens = Math.min(
      this.capacity,
      this.tokens + ((now - this.last) * this.ratePerSecond) / 1000,
    );
    this.last = now;
  }

  /** Takes one token if available. */
  tryTake(): boolean {
    this.refill();
    if (this.tokens >= 1) {
      this.tokens -= 1;
      return true;
    }
    return false;
  }

  /** Milliseconds until one token is available (0 when one is). */
  waitMs(): number {
    this.refill();
    if (this.tokens >= 1) return 0;
    return Math.ceil(((1 - this.tokens) * 1000) / this.ratePerSecond);
  }

  /** Empties the bucket and holds it empty for `ms` (after a 429 `retryAfter`). */
  block(ms: number): void {
    this.refill();
    this.tokens = -(ms * this.ratePerSecond) / 1000;
  }
}
