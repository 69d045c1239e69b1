import { Client } from 'pg';
import request from 'supertest';
import { startTestApp, uniqueId, type TestApp } from 'test/utils/create-test-app';

/**
 * Two Parley instances on one database with the PostgreSQL lock store: 50 conversations × 40
 * appends sent at once, spread over both instances.
 */
describe('two instances on one database', () => {
  // 2,000 requests a case: room for a loaded machine (a hang guard, not a speed check).
  jest.setTimeout(120_000);
  let a: TestApp;
  let b: TestApp;
  const env = { LOCK_STORE: 'postgres', DATABASE_POOL_SIZE: '20' };

  beforeAll(async () => {
    [a, b] = await Promise.all([startTestApp({ env }), startTestApp({ env })]);
  });
  afterAll(async () => {
    await Promise.all([a.close(), b.close()]);
  });

  it('keeps every event and each conversation’s order when appends run in sequence per conversation', async () => {
    const ids = Array.from({ length: 50 }, () => uniqueId('seq'));
    await Promise.all(
      ids.map(async (id, c) => {
        for (let i = 0; i < 40; i++) {
          const target = (c + i) % 2 === 0 ? a : b;
          await request(target.url)
            .post(`/conversations/${id}/tracker/events?include_events=NONE`)
            .send({ event: 'slot', name: 'name', value: `v${i}` })
            .expect(200);
        }
      }),
    );
    for (const id of ids) {
      const res = await request(a.url)
        .get(`/conversations/${id}/tracker?include_events=ALL`)
        .expect(200);
      const values = (res.body.events as Array<{ event: string; value?: string }>)
        .filter((e) => e.event === 'slot')
        .map((e) => e.value);
      expect(values).toEqual(Array.from({ length: 40 }, (_, i) => `v${i}`));
      expect(res.body.events).toHaveLength(43);
    }
  });

  it('loses nothing and starts each session once when all appends of a conversation arrive at once', async () => {
    const ids = Array.from({ length: 50 }, () => uniqueId('burst'));
    const sends = ids.flatMap((id, c) =>
      Array.from({ length: 40 }, (_, i) =>
        request(((c + i) % 2 === 0 ? a : b).url)
          .post(`/conversations/${id}/tracker/events?include_events=NONE`)
          .send({ event: 'slot', name: 'name', value: `v${i}` })
          .then((r) => r.status),
      ),
    );
    const statuses = await Promise.all(sends);
    expect(statuses.filter((s) => s !== 200)).toEqual([]);

    const db = new Client({ connectionString: process.env.DATABASE_URL });
    await db.connect();
    try {
      const rows = await db.query<{
        conversation_id: string;
        n: string;
        starts: string;
        max_seq: number;
      }>(
        `SELECT conversation_id, count(*) AS n,
                count(*) FILTER (WHERE action_name = 'action_session_start') AS starts, max(seq) AS max_seq
         FROM conversation_event WHERE conversation_id = ANY($1) GROUP BY conversation_id`,
        [ids],
      );
      expect(rows.rows).toHaveLength(50);
      for (const row of rows.rows) {
        expect(Number(row.n)).toBe(43);
        expect(Number(row.starts)).toBe(1);
        expect(row.max_seq).toBe(43);
      }
    } finally {
      await db.end();
    }
    for (const id of ids.slice(0, 5)) {
      const res = await request(b.url)
        .get(`/conversations/${id}/tracker?include_events=ALL`)
        .expect(200);
      const values = new Set(
        (res.body.events as Array<{ value?: string }>).map((e) => e.value).filter(Boolean),
      );
      expect(values.size).toBe(40);
    }
  });
});
