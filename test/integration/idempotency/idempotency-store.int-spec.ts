import { IdempotencyStore, type KeyScope } from 'src/modules/idempotency';
import { buildTypeOrmOptions } from 'src/platform/database/typeorm-options';
import { DataSource } from 'typeorm';

const id = (p: string) => `${p}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const DAY = 86_400_000;
const answer = { status: 200, contentType: 'application/json', body: Buffer.from('[1]') };

describe(IdempotencyStore.name, () => {
  let ds: DataSource;
  let store: IdempotencyStore;
  const at = (): KeyScope => ({ scope: 'rest', sender: id('s'), key: id('k') });

  beforeAll(async () => {
    ds = await new DataSource(buildTypeOrmOptions(process.env.DATABASE_URL ?? '', 4)).initialize();
    store = new IdempotencyStore(ds);
  });
  afterAll(() => ds.destroy());

  it('one claim wins among concurrent ones; the rest see it in flight, then its answer', async () => {
    const k = at();
    const claims = await Promise.all(
      Array.from({ length: 8 }, () => store.claim(k, 'fp', DAY, DAY)),
    );
    const won = claims.filter((c) => c.kind === 'claimed');
    expect(won).toHaveLength(1);
    expect(claims.filter((c) => c.kind === 'in_flight')).toHaveLength(7);
    const owner = (won[0] as { owner: string }).owner;
    await store.complete(k, owner, answer);
    expect(await store.claim(k, 'fp', DAY, DAY)).toEqual({ kind: 'replay', answer });
    expect(await store.claim(k, 'other', DAY, DAY)).toEqual({ kind: 'mismatch' });
  });

  it('a released claim lets the retry run; a stranger cannot complete or release it', async () => {
    const k = at();
    const first = await store.claim(k, 'fp', DAY, DAY);
    if (first.kind !== 'claimed') throw new Error('expected a claim');
    await store.complete(k, 'a4e5b0a2-9a53-4a47-8f43-000000000000', answer);
    await store.release(k, 'a4e5b0a2-9a53-4a47-8f43-000000000000');
    expect((await store.claim(k, 'fp', DAY, DAY)).kind).toBe('in_flight');
    await store.release(k, first.owner);
    expect((await store.claim(k, 'fp', DAY, DAY)).kind).toBe('claimed');
  });

  it('a claim whose lease ran out (its server died) is taken over', async () => {
    const k = at();
    expect((await store.claim(k, 'fp', DAY, 50)).kind).toBe('claimed');
    await sleep(100);
    expect((await store.claim(k, 'fp', DAY, DAY)).kind).toBe('claimed');
  });

  it('sweep deletes expired keys and keeps the others', async () => {
    const old = at();
    const kept = at();
    const a = await store.claim(old, 'fp', 50, DAY);
    const b = await store.claim(kept, 'fp', DAY, DAY);
    if (a.kind !== 'claimed' || b.kind !== 'claimed') throw new Error('expected claims');
    await store.complete(old, a.owner, answer);
    await store.complete(kept, b.owner, answer);
    await sleep(100);
    expect(await store.sweep()).toBeGreaterThanOrEqual(1);
    const rows = await ds.query<{ sender: string }[]>(
      `SELECT sender FROM idempotency_key WHERE sender = ANY($1)`,
      [[old.sender, kept.sender]],
    );
    expect(rows.map((r) => r.sender)).toEqual([kept.sender]);
  });
});
