import { Pool } from 'pg';
import { type DueReminder, ReminderPoller, type ReminderRecord, type RuntimeLog } from 'src/core';
import { PostgresReminderStore, ReminderMetrics } from 'src/modules/reminders';
import { PostgresLockStore } from 'src/modules/tracker';
import { metricsRegistry } from 'src/platform/metrics/registry';
import { uniqueId } from 'test/utils/create-test-app';

const url = (): string => {
  const u = process.env.DATABASE_URL;
  if (!u) throw new Error('DATABASE_URL missing');
  return u;
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const quiet: RuntimeLog = { info: () => undefined, warn: () => undefined, error: () => undefined };

function reminder(conversationId: string, name: string, triggerAt: number): ReminderRecord {
  return {
    conversationId,
    name,
    intent: `intent_${name}`,
    entities: [{ entity: 'n', value: name }],
    triggerAt,
    killOnUserMessage: true,
    scheduledAt: 1_700_000_000.5,
    outputChannel: 'callback',
  };
}

/** One "instance": its own pool, store and poller, firing into `fired`. */
interface Instance {
  readonly store: PostgresReminderStore;
  readonly poller: ReminderPoller;
  readonly fired: DueReminder[];
  close(): Promise<void>;
}

function instance(fire?: (due: DueReminder) => Promise<void>): Instance {
  const pool = new Pool({ connectionString: url(), max: 4 });
  const store = new PostgresReminderStore(pool);
  const fired: DueReminder[] = [];
  const poller = new ReminderPoller(
    store,
    async (due) => {
      fired.push(due);
      await fire?.(due);
    },
    quiet,
    { sweepMs: 50, leaseMs: 2_000, retryDelayMs: 50 },
  );
  return {
    store,
    poller,
    fired,
    close: async () => {
      await poller.stop();
      await pool.end();
    },
  };
}

/** Waits (bounded) until `done()` holds. */
async function until(done: () => boolean | Promise<boolean>, ms = 15_000): Promise<void> {
  for (const end = Date.now() + ms; !(await done()) && Date.now() < end;) await sleep(20);
}

describe(PostgresReminderStore.name, () => {
  let pool: Pool;
  const open: Instance[] = [];
  const start = (fire?: (due: DueReminder) => Promise<void>): Instance => {
    const i = instance(fire);
    open.push(i);
    return i;
  };

  beforeAll(() => {
    pool = new Pool({ connectionString: url(), max: 2 });
  });
  afterEach(async () => {
    await Promise.all(open.splice(0).map((i) => i.close()));
  });
  afterAll(async () => {
    await pool.end();
  });

  const rowsOf = async (prefix: string): Promise<Record<string, unknown>[]> =>
    (
      await pool.query(
        'SELECT conversation_id, name, intent, status FROM reminder WHERE conversation_id LIKE $1 ORDER BY name',
        [`${prefix}%`],
      )
    ).rows as Record<string, unknown>[];
  const mine = (i: Instance, prefix: string): DueReminder[] =>
    i.fired.filter((d) => d.conversationId.startsWith(prefix));

  it('two instances fire 300 reminders due within 2 s exactly once between them', async () => {
    const prefix = uniqueId('many');
    const one = start();
    const two = start();
    one.poller.start();
    two.poller.start();
    // Written while both poll, half through each instance, due over the next 2 s.
    const now = Date.now();
    await Promise.all(
      Array.from({ length: 300 }, (_, i) =>
        (i % 2 === 0 ? one : two).store.schedule(
          reminder(`${prefix}-${i % 30}`, `r${i}`, now + (i * 2_000) / 300),
        ),
      ),
    );
    // Every reminder fired and completed (its row gone), then longer than a sweep: a second
    // firing would show up now.
    await until(async () => (await rowsOf(prefix)).length === 0);
    await sleep(300);
    const all = [...mine(one, prefix), ...mine(two, prefix)].map(
      (d) => `${d.conversationId}/${d.intent}`,
    );
    expect(all).toHaveLength(300);
    expect(new Set(all).size).toBe(300);
    // Both instances took part.
    expect(mine(one, prefix).length).toBeGreaterThan(0);
    expect(mine(two, prefix).length).toBeGreaterThan(0);
    expect(await rowsOf(prefix)).toEqual([]);
  });

  it('round-trips what the runtime needs to fire a reminder', async () => {
    const prefix = uniqueId('fields');
    const one = start();
    await one.store.schedule({
      ...reminder(`${prefix}-c`, 'a', Date.now()),
      entities: [{ entity: 'place', value: { city: 'Köln', n: [1, 2] } }],
      killOnUserMessage: false,
      outputChannel: null,
    });
    one.poller.start();
    await until(() => mine(one, prefix).length > 0);
    expect(mine(one, prefix)).toEqual([
      {
        conversationId: `${prefix}-c`,
        name: 'a',
        triggerAt: expect.any(Number),
        intent: 'intent_a',
        entities: [{ entity: 'place', value: { city: 'Köln', n: [1, 2] } }],
        scheduledAt: 1_700_000_000.5,
        killOnUserMessage: false,
        outputChannel: null,
      },
    ]);
  });

  it('a reminder cancelled on another instance never fires; the same name replaces', async () => {
    const prefix = uniqueId('cancel');
    const one = start();
    const two = start();
    const at = Date.now() + 300;
    await one.store.schedule(reminder(`${prefix}-c`, 'byname', at));
    await one.store.schedule(reminder(`${prefix}-c`, 'byintent', at));
    await one.store.schedule(reminder(`${prefix}-c`, 'replaced', at));
    await one.store.schedule({ ...reminder(`${prefix}-c`, 'replaced', at), intent: 'second' });
    await one.store.schedule(reminder(`${prefix}-other`, 'byname', at));
    expect(await two.store.cancel(`${prefix}-c`, { name: 'byname' })).toBe(1);
    expect(
      await two.store.cancel(`${prefix}-c`, {
        name: null,
        intent: 'intent_byintent',
        entities: [{ value: 'byintent', entity: 'n' }],
      }),
    ).toBe(1);
    expect(
      await two.store.cancel(`${prefix}-c`, {
        name: null,
        intent: 'intent_replaced',
        entities: null,
      }),
    ).toBe(0);
    one.poller.start();
    two.poller.start();
    await until(async () => (await rowsOf(prefix)).length === 0);
    await sleep(300);
    const fired = [...mine(one, prefix), ...mine(two, prefix)]
      .map((d) => `${d.conversationId.slice(prefix.length)}/${d.intent}`)
      .sort();
    expect(fired).toEqual(['-c/second', '-other/intent_byname']);
  });

  it('reminders survive a restart: a new instance on the same database fires them', async () => {
    const prefix = uniqueId('restart');
    const before = start();
    before.poller.start();
    // Due after the instance stopped (each write commits: slow disks take a while).
    const at = Date.now() + 3_000;
    for (let i = 0; i < 20; i++) {
      await before.store.schedule(reminder(`${prefix}-${i}`, 'r', at));
    }
    await before.close();
    open.splice(open.indexOf(before), 1);
    expect(mine(before, prefix)).toEqual([]);
    expect(await rowsOf(prefix)).toHaveLength(20);
    const after = start();
    after.poller.start();
    await until(() => mine(after, prefix).length >= 20);
    expect(new Set(mine(after, prefix).map((d) => d.conversationId)).size).toBe(20);
    await until(async () => (await rowsOf(prefix)).length === 0);
    expect(await rowsOf(prefix)).toEqual([]);
  });

  it('a reminder claimed by an instance that died fires on another once the lease ends', async () => {
    const prefix = uniqueId('lease');
    const dead = start();
    await dead.store.schedule(reminder(`${prefix}-c`, 'r', Date.now()));
    // The dead instance claimed it (2 s lease) and never fired it.
    const claimed = (await dead.store.claimDue(Date.now(), 1_000, 2_000)).filter((c) =>
      c.conversationId.startsWith(prefix),
    );
    expect(claimed).toHaveLength(1);
    expect(await rowsOf(prefix)).toEqual([
      expect.objectContaining({ name: 'r', status: 'claimed' }),
    ]);
    const alive = start();
    alive.poller.start();
    await until(async () => (await rowsOf(prefix)).length === 0, 10_000);
    expect(mine(alive, prefix).map((d) => d.intent)).toEqual(['intent_r']);
  });

  it('renewing a claim keeps other instances off it; a claim taken over is not renewed', async () => {
    const prefix = uniqueId('renew');
    const one = start();
    const two = start();
    const t = Date.now();
    await one.store.schedule(reminder(`${prefix}-c`, 'r', t));
    await one.store.schedule(reminder(`${prefix}-c`, 's', t));
    const ofMine = <T extends { conversationId: string }>(list: T[]): T[] =>
      list.filter((c) => c.conversationId.startsWith(prefix));
    const held = ofMine(await one.store.claimDue(t, 1_000, 1_000));
    expect(held.map((c) => c.name).sort()).toEqual(['r', 's']);
    // `r` is renewed at +800 ms until +1,800 ms; `s` is not and lapses at +1,000 ms.
    await one.store.renew(
      held.filter((c) => c.name === 'r'),
      t + 800,
      1_000,
    );
    const taken = ofMine(await two.store.claimDue(t + 1_500, 1_000, 1_000));
    expect(taken.map((c) => c.name)).toEqual(['s']);
    // Renewing both for a minute: `r` (still held) is renewed; `s` (taken over) keeps the new
    // holder's lease, which lapses at +2,500 ms.
    await one.store.renew(held, t + 1_600, 60_000);
    const later = ofMine(await two.store.claimDue(t + 2_600, 1_000, 1_000));
    expect(later.map((c) => [c.name, c.attempts])).toEqual([['s', 3]]);
  });

  it('a burst of slow reminders: no more claimed at a time than the PostgreSQL lock can hold, each fired once', async () => {
    const prefix = uniqueId('burst');
    const locks = new PostgresLockStore(url(), 2, 60_000);
    const pool = new Pool({ connectionString: url(), max: 4 });
    const store = new PostgresReminderStore(pool);
    const fired: string[] = [];
    const poller = new ReminderPoller(
      store,
      (due) =>
        locks.withLock(due.conversationId, async () => {
          if (due.conversationId.startsWith(prefix)) fired.push(due.conversationId);
          await sleep(150);
        }),
      quiet,
      { sweepMs: 50, leaseMs: 60_000, maxInFlight: ReminderPoller.maxInFlightUnder(locks) },
    );
    try {
      const ids = Array.from({ length: 12 }, (_, i) => `${prefix}-${i}`);
      for (const id of ids) await store.schedule(reminder(id, 'r', Date.now()));
      poller.start();
      let mostClaimed = 0;
      await until(async () => {
        const rows = await rowsOf(prefix);
        mostClaimed = Math.max(mostClaimed, rows.filter((r) => r.status === 'claimed').length);
        return rows.length === 0;
      });
      expect(mostClaimed).toBeGreaterThan(0);
      expect(mostClaimed).toBeLessThanOrEqual(2);
      expect(fired.sort()).toEqual(ids.sort());
    } finally {
      await poller.stop();
      await pool.end();
      await locks.onApplicationShutdown();
    }
  });

  it('completing a claim whose lease was taken over deletes nothing', async () => {
    const prefix = uniqueId('stale');
    const one = start();
    const two = start();
    const t = Date.now();
    await one.store.schedule(reminder(`${prefix}-c`, 'r', t));
    const ofMine = <T extends { conversationId: string }>(list: T[]): T[] =>
      list.filter((c) => c.conversationId.startsWith(prefix));
    const stale = ofMine(await one.store.claimDue(t, 1_000, 1_000));
    expect(ofMine(await two.store.claimDue(t + 500, 1_000, 1_000))).toEqual([]);
    const fresh = ofMine(await two.store.claimDue(t + 1_000, 1_000, 1_000));
    expect(fresh.map((c) => c.attempts)).toEqual([2]);
    await one.store.complete(stale[0]!);
    await one.store.retry(stale[0]!, t);
    expect(await rowsOf(prefix)).toEqual([expect.objectContaining({ status: 'claimed' })]);
    await two.store.complete(fresh[0]!);
    expect(await rowsOf(prefix)).toEqual([]);
  });

  it('a failed fire is retried by the next sweep', async () => {
    const prefix = uniqueId('retry');
    let failures = 0;
    const one = start((due) => {
      if (due.conversationId.startsWith(prefix) && failures++ === 0) {
        return Promise.reject(new Error('action server down'));
      }
      return Promise.resolve();
    });
    await one.store.schedule(reminder(`${prefix}-c`, 'r', Date.now()));
    one.poller.start();
    await until(async () => (await rowsOf(prefix)).length === 0);
    await sleep(200);
    expect(mine(one, prefix)).toHaveLength(2);
    expect(await rowsOf(prefix)).toEqual([]);
  });

  it('counts the reminders due and not fired yet', async () => {
    const prefix = uniqueId('count');
    const one = start();
    const base = await one.store.dueCount(Date.now());
    await one.store.schedule(reminder(`${prefix}-a`, 'r', Date.now() - 1_000));
    await one.store.schedule(reminder(`${prefix}-b`, 'r', Date.now() + 60_000));
    expect(await one.store.dueCount(Date.now())).toBe(base + 1);
    await one.store.cancel(`${prefix}-a`, { name: 'r' });
    await one.store.cancel(`${prefix}-b`, { name: 'r' });
  });

  it('reports the reminders due and not fired yet as the parley_reminders_due gauge', async () => {
    const prefix = uniqueId('gauge');
    const one = start();
    const metrics = new ReminderMetrics(one.store);
    const gauge = async (): Promise<number> => {
      await metrics.measure();
      const metric = metricsRegistry.getSingleMetric('parley_reminders_due');
      return (await metric!.get()).values[0]!.value;
    };
    const base = await gauge();
    await one.store.schedule(reminder(`${prefix}-a`, 'r', Date.now() - 1_000));
    await one.store.schedule(reminder(`${prefix}-b`, 'r', Date.now() - 1_000));
    await one.store.schedule(reminder(`${prefix}-c`, 'r', Date.now() + 60_000));
    expect(await gauge()).toBe(base + 2);
    one.poller.start();
    await until(async () => (await rowsOf(prefix)).length === 1);
    expect(await gauge()).toBe(base);
    await one.store.cancel(`${prefix}-c`, { name: 'r' });
  });
});
