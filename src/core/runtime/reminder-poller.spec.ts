import {
  DEFAULT_POLLER_OPTIONS,
  type DueReminder,
  InMemoryLockStore,
  InMemoryReminderStore,
  ReminderPoller,
  type ReminderRecord,
  type RuntimeLog,
} from 'src/core';

function quietLog(): RuntimeLog & { errors: string[] } {
  const errors: string[] = [];
  return { errors, info: () => undefined, warn: () => undefined, error: (m) => errors.push(m) };
}

function reminder(name: string, triggerAt: number, conversationId = 'c1'): ReminderRecord {
  return {
    conversationId,
    name,
    intent: `intent_${name}`,
    entities: [],
    triggerAt,
    killOnUserMessage: true,
    scheduledAt: 1,
    outputChannel: null,
  };
}

/** A clock the test moves. */
function clock(start = 1_000_000): { now: () => number; set(ms: number): void } {
  let t = start;
  return { now: () => t, set: (ms) => (t = ms) };
}

/** A fire callback, and the intent of the first reminder it fires. */
function firstFire(): { fired: Promise<string>; fire: (due: DueReminder) => Promise<void> } {
  let resolveFired: (intent: string) => void = () => undefined;
  const fired = new Promise<string>((r) => (resolveFired = r));
  return { fired, fire: (d) => (resolveFired(d.intent), Promise.resolve()) };
}

/** A poller whose periodic sweep never runs by itself: the test sweeps. */
function poller(
  store: InMemoryReminderStore,
  fire: (due: DueReminder) => Promise<void>,
  now: () => number,
  options: { ready?: () => boolean; log?: RuntimeLog } = {},
): ReminderPoller {
  const p = new ReminderPoller(
    store,
    fire,
    options.log ?? quietLog(),
    { sweepMs: 3_600_000, leaseMs: 10_000, maxAttempts: 2, retryDelayMs: 100 },
    options.ready,
    now,
  );
  p.start();
  return p;
}

describe(ReminderPoller.name, () => {
  const running: ReminderPoller[] = [];
  afterEach(async () => {
    await Promise.all(running.splice(0).map((p) => p.stop()));
  });
  const track = (p: ReminderPoller): ReminderPoller => (running.push(p), p);

  it('fires each due reminder once and leaves the ones not due yet', async () => {
    const store = new InMemoryReminderStore();
    const t = clock();
    const fired: string[] = [];
    const p = track(poller(store, (d) => (fired.push(d.intent), Promise.resolve()), t.now));
    await store.schedule(reminder('a', t.now() - 5));
    await store.schedule(reminder('b', t.now() + 500));
    await p.sweep();
    await p.stop();
    expect(fired).toEqual(['intent_a']);
    expect(store.list().map((r) => r.name)).toEqual(['b']);
    p.start();
    t.set(t.now() + 500);
    await p.sweep();
    await p.sweep();
    await p.stop();
    expect(fired).toEqual(['intent_a', 'intent_b']);
    expect(store.size).toBe(0);
  });

  it('hands the runtime what the reminder was set with', async () => {
    const store = new InMemoryReminderStore();
    const t = clock();
    const fired: DueReminder[] = [];
    const p = track(poller(store, (d) => (fired.push(d), Promise.resolve()), t.now));
    await store.schedule({
      ...reminder('a', t.now()),
      entities: [{ entity: 'x', value: 1 }],
      killOnUserMessage: false,
      scheduledAt: 42,
      outputChannel: 'callback',
    });
    await p.sweep();
    await p.stop();
    expect(fired).toEqual([
      {
        conversationId: 'c1',
        name: 'a',
        triggerAt: t.now(),
        intent: 'intent_a',
        entities: [{ entity: 'x', value: 1 }],
        scheduledAt: 42,
        killOnUserMessage: false,
        outputChannel: 'callback',
      },
    ]);
  });

  it('two pollers on one store fire each reminder exactly once', async () => {
    const store = new InMemoryReminderStore();
    const t = clock();
    const fired: string[] = [];
    const fire = (d: DueReminder) => (fired.push(d.conversationId), Promise.resolve());
    const one = track(poller(store, fire, t.now));
    const two = track(poller(store, fire, t.now));
    for (let i = 0; i < 300; i++) await store.schedule(reminder('r', t.now() - i, `c${i}`));
    await Promise.all([one.sweep(), two.sweep(), one.sweep(), two.sweep()]);
    await Promise.all([one.stop(), two.stop()]);
    expect(fired).toHaveLength(300);
    expect(new Set(fired).size).toBe(300);
  });

  it('waits until it is ready (the model is loaded) before firing', async () => {
    const store = new InMemoryReminderStore();
    const t = clock();
    let ready = false;
    const fired: string[] = [];
    const p = track(
      poller(store, (d) => (fired.push(d.intent), Promise.resolve()), t.now, {
        ready: () => ready,
      }),
    );
    await store.schedule(reminder('a', t.now()));
    await p.sweep();
    expect(fired).toEqual([]);
    ready = true;
    await p.sweep();
    await p.stop();
    expect(fired).toEqual(['intent_a']);
  });

  it('retries a failed fire, then gives it up after maxAttempts', async () => {
    const store = new InMemoryReminderStore();
    const t = clock();
    const log = quietLog();
    let calls = 0;
    const p = track(
      poller(
        store,
        () => {
          calls++;
          return Promise.reject(new Error('down'));
        },
        t.now,
        { log },
      ),
    );
    await store.schedule(reminder('a', t.now()));
    await p.sweep();
    await p.stop();
    expect(calls).toBe(1);
    expect(store.size).toBe(1);
    p.start();
    await p.sweep(); // not yet: the retry waits retryDelayMs
    t.set(t.now() + 100);
    await p.sweep();
    await p.stop();
    expect(calls).toBe(2);
    expect(store.size).toBe(0);
    expect(log.errors).toEqual(['reminder failed; retried', 'reminder failed; given up']);
  });

  it('fires a reminder claimed by an instance that died, once its lease ended', async () => {
    const store = new InMemoryReminderStore();
    const t = clock();
    await store.schedule(reminder('a', t.now()));
    // The dead instance's claim: never completed.
    expect(await store.claimDue(t.now(), 10, 10_000)).toHaveLength(1);
    const fired: string[] = [];
    const p = track(poller(store, (d) => (fired.push(d.intent), Promise.resolve()), t.now));
    await p.sweep();
    expect(fired).toEqual([]);
    t.set(t.now() + 10_000);
    await p.sweep();
    await p.stop();
    expect(fired).toEqual(['intent_a']);
    expect(store.size).toBe(0);
  });

  it('renews the lease of a reminder while it fires: no other instance claims it meanwhile', async () => {
    const store = new InMemoryReminderStore();
    const t = clock();
    let release: () => void = () => undefined;
    const slow = new Promise<void>((r) => (release = r));
    const fired: string[] = [];
    const a = track(poller(store, (d) => (fired.push(`a:${d.intent}`), slow), t.now));
    const b = track(poller(store, (d) => (fired.push(`b:${d.intent}`), Promise.resolve()), t.now));
    try {
      await store.schedule(reminder('a', t.now()));
      await a.sweep();
      expect(fired).toEqual(['a:intent_a']);
      // The turn runs past the 10 s lease; `a` renews it on the way (every third of the lease).
      t.set(t.now() + 8_000);
      await a.renew();
      t.set(t.now() + 8_000);
      await b.sweep();
      expect(fired).toEqual(['a:intent_a']);
    } finally {
      release();
    }
    await a.stop();
    expect(store.size).toBe(0);
    // Without renewal (the instance hung or died), the lease lapses and `b` takes it over.
    await store.schedule(reminder('c', t.now()));
    expect(await store.claimDue(t.now(), 10, 10_000)).toHaveLength(1);
    t.set(t.now() + 10_000);
    await b.sweep();
    expect(fired).toEqual(['a:intent_a', 'b:intent_c']);
  });

  it('fires no more than its lock can hold at once; the rest stay claimable by another instance', async () => {
    class TwoAtATime extends InMemoryLockStore {
      override concurrentLocks(): number {
        return 2;
      }
    }
    expect(ReminderPoller.maxInFlightUnder(new TwoAtATime())).toBe(2);
    expect(ReminderPoller.maxInFlightUnder(new InMemoryLockStore())).toBe(
      DEFAULT_POLLER_OPTIONS.maxInFlight,
    );
    const store = new InMemoryReminderStore();
    const t = clock();
    let release: () => void = () => undefined;
    const slow = new Promise<void>((r) => (release = r));
    const fired: string[] = [];
    const a = track(
      new ReminderPoller(
        store,
        (d) => (fired.push(`a:${d.intent}`), slow),
        quietLog(),
        { sweepMs: 3_600_000, maxInFlight: ReminderPoller.maxInFlightUnder(new TwoAtATime()) },
        undefined,
        t.now,
      ),
    );
    a.start();
    const b = track(poller(store, (d) => (fired.push(`b:${d.intent}`), Promise.resolve()), t.now));
    try {
      for (const name of ['r1', 'r2', 'r3', 'r4', 'r5']) {
        await store.schedule(reminder(name, t.now(), name));
      }
      await a.sweep();
      expect(a.firing).toBe(2);
      await b.sweep();
    } finally {
      release();
    }
    await a.stop();
    expect(fired.filter((f) => f.startsWith('a:'))).toHaveLength(2);
    expect(fired.filter((f) => f.startsWith('b:'))).toHaveLength(3);
    expect(store.size).toBe(0);
  });

  it('keeps a reminder of the same name scheduled while the old one fires', async () => {
    const store = new InMemoryReminderStore();
    const t = clock();
    const fired: string[] = [];
    const p = track(
      poller(
        store,
        async (d) => {
          fired.push(d.intent);
          // The fired turn sets the reminder again (a recurring reminder).
          if (fired.length === 1) await store.schedule(reminder('a', t.now() + 1_000));
        },
        t.now,
      ),
    );
    await store.schedule(reminder('a', t.now()));
    await p.sweep();
    await p.stop();
    expect(store.list()).toEqual([reminder('a', t.now() + 1_000)]);
  });

  it('wakes up at the time of a reminder scheduled on this instance', async () => {
    const store = new InMemoryReminderStore();
    const { fired, fire } = firstFire();
    const p = track(poller(store, fire, Date.now));
    const at = Date.now() + 20;
    await store.schedule(reminder('a', at));
    p.wake(at);
    expect(await fired).toBe('intent_a');
  });

  it('waits again when its timer fires before the clock reads the reminder time', async () => {
    const store = new InMemoryReminderStore();
    const t = clock();
    const { fired, fire } = firstFire();
    const p = track(poller(store, fire, t.now));
    const at = t.now() + 30;
    await store.schedule(reminder('a', at));
    p.wake(at);
    // The timer fires after 30 ms while the clock still reads 30 ms before the reminder.
    await new Promise((r) => setTimeout(r, 80));
    t.set(at);
    const timeout = new Promise<string>((r) => setTimeout(() => r('not fired'), 2_000));
    expect(await Promise.race([fired, timeout])).toBe('intent_a');
  });

  it('logs a failing sweep once per outage', async () => {
    const store = new InMemoryReminderStore();
    const t = clock();
    const log = quietLog();
    let down = true;
    const claimDue = store.claimDue.bind(store);
    store.claimDue = (...args) => (down ? Promise.reject(new Error('db down')) : claimDue(...args));
    const p = track(poller(store, () => Promise.resolve(), t.now, { log }));
    await p.sweep();
    await p.sweep();
    down = false;
    await p.sweep();
    down = true;
    await p.sweep();
    expect(log.errors).toEqual(['reminder sweep failed', 'reminder sweep failed']);
  });
});
