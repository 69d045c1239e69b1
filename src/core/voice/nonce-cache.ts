/**
 * Remembers signature nonces until they expire, so a captured upgrade request cannot be replayed.
 * Bounded: when full, the entry that expires first is dropped.
 */
export class NonceCache {
  private readonly entries = new Map<string, number>();

  constructor(private readonly maxEntries = 100_000) {}

  /** Records `nonce` valid until `expiresAt` (seconds); false when it was already seen. */
  remember(nonce: string, expiresAt: number, now: number): boolean {
    this.prune(now);
    const known = this.entries.get(nonce);
    if (known !== undefined && known >= now) return false;
    if (this.entries.size >= this.maxEntries) {
      let oldestKey: string | null = null;
      let oldest = Infinity;
      for (const [key, expiry] of this.entries) {
        if (expiry < oldest) {
          oldest = expiry;
          oldestKey = key;
        }
      }
      if (oldestKey !== null) this.entries.delete(oldestKey);
    }
    this.entries.set(nonce, expiresAt);
    return true;
  }

  get size(): number {
    return this.entries.size;
  }

  private prune(now: number): void {
    for (const [key, expiry] of this.entries) if (expiry < now) this.entries.delete(key);
  }
}
