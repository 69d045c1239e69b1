import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { PostgresLockStore } from 'src/modules/tracker';

const url = (): string => {
  const u = process.env.DATABASE_URL;
  if (!u) throw new Error('DATABASE_URL missing');
  return u;
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe(PostgresLockStore.name, () => {
  let one: PostgresLockStore;
  let two: PostgresLockStore;

  beforeAll(() => {
    // Two stores = two "instances": their in-process queues know nothing of each other.
    one = new PostgresLockStore(url(), 4, 5000);
    two = new PostgresLockStore(url(), 4, 300);
  });
  afterAll(async () => {
    await one.onApplicationShutdown();
    await two.onApplicationShutdown();
  });

  it('excludes a second instance from the same conversation until the first is done', async () => {
    const log: string[] = [];
    let entered!: () => void;
    const firstInside = new Promise<void>((r) => (entered = r));
    const first = one.withLock('c-1', async () => {
      log.push('one:start');
      entered();
      await sleep(150);
      log.push('one:end');
    });
    // The second instance asks only once the first holds the lock (a fixed delay raced the
    // first connection on a loaded machine).
    await firstInside;
    const second = two.withLock('c-1', async () => {
      log.push('two:start');
      await Promise.resolve();
      log.push('two:end');
    });
    await Promise.all([first, second]);
    expect(log).toEqual(['one:start', 'one:end', 'two:start', 'two:end']);
  });

  it('lets different conversations run at the same time', async () => {
    const log: string[] = [];
    await Promise.all([
      one.withLock('c-a', async () => {
        log.push('a:start');
        await sleep(100);
        log.push('a:end');
      }),
      two.withLock('c-b', async () => {
        log.push('b:start');
        await sleep(10);
        log.push('b:end');
      }),
    ]);
    expect(log.indexOf('b:end')).toBeLessThan(log.indexOf('a:end'));
  });

  it('hands the work the version it read once the lock was held, for any id', async () => {
    const db = new Client({ connectionString: url() });
    await db.connect();
    try {
      for (const id of [`lease-${randomUUID()}`, `it's \\ a "quote" ${randomUUID()}`]) {
        expect(await one.withLock(id, (lease) => Promise.resolve(lease.lastVersion))).toBe(
          undefined,
        );
        const { rows } = await db.query<{ generation: string }>(
          `INSERT INTO conversation (id, started_at, latest_event_time, last_seq)
           VALUES ($1, 1, 1, 3) RETURNING generation`,
          [id],
        );
        // Moved on by "another instance" while this one waits for the lock: the newer version.
        let inside!: () => void;
        const holding = new Promise<void>((r) => (inside = r));
        const writer = two.withLock(id, async () => {
          inside();
          await sleep(50);
          await db.query('UPDATE conversation SET last_seq = 5 WHERE id = $1', [id]);
        });
        await holding;
        const seen = await one.withLock(id, (lease) => Promise.resolve(lease.lastVersion));
        await writer;
        expect(seen).toEqual({ generation: rows[0]!.generation, lastSeq: 5 });
        await db.query('DELETE FROM conversation WHERE id = $1', [id]);
      }
    } finally {
      await db.end();
    }
  });

  it('releases the lock when the work throws', async () => {
    await expect(one.withLock('c-err', () => Promise.reject(new Error('boom')))).rejects.toThrow(
      'boom',
    );
    await expect(two.withLock('c-err', () => Promise.resolve('ok'))).resolves.toBe('ok');
  });

  it('gives up with LOCK.TIMEOUT when the lock is held too long', async () => {
    let entered!: () => void;
    const holding = new Promise<void>((r) => (entered = r));
    const holder = one.withLock('c-slow', () => {
      entered();
      return sleep(1000);
    });
    await holding;
    await expect(two.withLock('c-slow', () => Promise.resolve())).rejects.toMatchObject({
      code: 'LOCK.TIMEOUT',
    });
    await holder;
  });
});
