import { InMemoryLockStore } from 'src/core/locking/in-memory-lock-store';

const tick = (ms = 0): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe(InMemoryLockStore.name, () => {
  it('runs work on one conversation one at a time, in arrival order', async () => {
    const locks = new InMemoryLockStore();
    const log: string[] = [];
    const job = (name: string, ms: number) =>
      locks.withLock('c', async () => {
        log.push(`start ${name}`);
        await tick(ms);
        log.push(`end ${name}`);
        return name;
      });
    const results = await Promise.all([job('a', 10), job('b', 0), job('c', 5)]);
    expect(results).toEqual(['a', 'b', 'c']);
    expect(log).toEqual(['start a', 'end a', 'start b', 'end b', 'start c', 'end c']);
    expect(locks.size).toBe(0);
  });

  it('runs different conversations in parallel', async () => {
    const locks = new InMemoryLockStore();
    const log: string[] = [];
    await Promise.all(
      ['x', 'y'].map((id) =>
        locks.withLock(id, async () => {
          log.push(`start ${id}`);
          await tick(5);
          log.push(`end ${id}`);
        }),
      ),
    );
    expect(log.slice(0, 2)).toEqual(['start x', 'start y']);
  });

  it('releases the lock when the work fails', async () => {
    const locks = new InMemoryLockStore();
    await expect(locks.withLock('c', () => Promise.reject(new Error('boom')))).rejects.toThrow(
      'boom',
    );
    await expect(locks.withLock('c', () => Promise.resolve(1))).resolves.toBe(1);
    expect(locks.size).toBe(0);
  });

  it('gives up waiting after the timeout with LOCK.TIMEOUT and lets later waiters run', async () => {
    const locks = new InMemoryLockStore({ waitTimeoutMs: 5 });
    let release!: () => void;
    const holder = locks.withLock('c', () => new Promise<void>((r) => (release = r)));
    await tick();
    await expect(locks.withLock('c', () => Promise.resolve('never'))).rejects.toMatchObject({
      code: 'LOCK.TIMEOUT',
    });
    const later = locks.withLock('c', () => Promise.resolve('later'));
    release();
    await holder;
    await expect(later).resolves.toBe('later');
  });
});
