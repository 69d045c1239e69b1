import { ReadinessChecks } from './readiness-checks';

/** A check whose runs the test ends by hand. */
function controlledCheck(): {
  check: () => Promise<void>;
  runs: number;
  finish(error?: Error): void;
} {
  const pending: Array<{ resolve: () => void; reject: (e: Error) => void }> = [];
  const state = {
    runs: 0,
    check: (): Promise<void> => {
      state.runs++;
      return new Promise<void>((resolve, reject) => pending.push({ resolve, reject }));
    },
    finish(error?: Error): void {
      for (const p of pending.splice(0)) {
        if (error) p.reject(error);
        else p.resolve();
      }
    },
  };
  return state;
}

describe('ReadinessChecks', () => {
  it('reports up, down with the reason, and down on timeout', async () => {
    const checks = new ReadinessChecks();
    checks.register('ok', () => Promise.resolve({ loaded: true }), { critical: true });
    checks.register('broken', () => Promise.reject(new Error('refused')), { critical: false });
    checks.register('hung', () => new Promise(() => undefined), { critical: true, timeoutMs: 20 });
    expect(await checks.run('ok')).toEqual({ up: true, critical: true, details: { loaded: true } });
    expect(await checks.run('broken')).toEqual({
      up: false,
      critical: false,
      details: { message: 'refused' },
    });
    expect(await checks.run('hung')).toEqual({
      up: false,
      critical: true,
      details: { message: 'no answer within 20 ms' },
    });
  });

  it('runs one check at a time: probes during a slow run share it instead of piling up', async () => {
    const checks = new ReadinessChecks();
    const slow = controlledCheck();
    checks.register('lock_store', slow.check, { critical: true, timeoutMs: 20 });

    // Five probes while the first run hangs: each times out, and the check ran once.
    const outcomes = await Promise.all(Array.from({ length: 5 }, () => checks.run('lock_store')));
    expect(outcomes.map((o) => o.up)).toEqual([false, false, false, false, false]);
    expect(await checks.run('lock_store')).toEqual(expect.objectContaining({ up: false }));
    expect(slow.runs).toBe(1);

    // Once that run ends, the next probe starts a fresh one, which answers in time.
    slow.finish();
    await new Promise((r) => setImmediate(r));
    const next = checks.run('lock_store');
    expect(slow.runs).toBe(2);
    slow.finish();
    expect(await next).toEqual({ up: true, critical: true, details: {} });

    // A failed run is forgotten too.
    const failing = checks.run('lock_store');
    slow.finish(new Error('connection refused'));
    expect(await failing).toEqual(
      expect.objectContaining({ up: false, details: { message: 'connection refused' } }),
    );
    const again = checks.run('lock_store');
    expect(slow.runs).toBe(4);
    slow.finish();
    expect((await again).up).toBe(true);
  });
});
