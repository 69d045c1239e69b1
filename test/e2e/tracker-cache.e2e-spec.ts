import request from 'supertest';
import { startTestApp, uniqueId, type TestApp } from 'test/utils/create-test-app';

/**
 * Two instances with in-process locks and tracker caches on one database: a cache made stale
 * by the other instance must be noticed (conditional appends, version-checked reads), never
 * answered from or written over.
 */
describe('tracker cache across instances', () => {
  let a: TestApp;
  let b: TestApp;

  beforeAll(async () => {
    [a, b] = await Promise.all([startTestApp(), startTestApp()]);
  });
  afterAll(async () => {
    await Promise.all([a.close(), b.close()]);
  });

  const append = (t: TestApp, id: string, value: string) =>
    request(t.url)
      .post(`/conversations/${id}/tracker/events?include_events=ALL`)
      .send({ event: 'slot', name: 'name', value })
      .expect(200);

  it('reloads a session another instance appended to, and keeps every event in order', async () => {
    const id = uniqueId('stale');
    await append(a, id, 'a1');
    await append(b, id, 'b1');
    const res = await append(a, id, 'a2');
    const values = (res.body.events as Array<{ event: string; value?: string }>)
      .filter((e) => e.event === 'slot')
      .map((e) => e.value);
    expect(values).toEqual(['a1', 'b1', 'a2']);
    expect(
      res.body.events.filter((e: { name?: string }) => e.name === 'action_session_start'),
    ).toHaveLength(1);
  });

  it('answers reads with what is stored, not with a stale cache', async () => {
    const id = uniqueId('stale-read');
    await append(a, id, 'first');
    await request(a.url).get(`/conversations/${id}/tracker`).expect(200);
    await append(b, id, 'second');
    const res = await request(a.url).get(`/conversations/${id}/tracker`).expect(200);
    expect(res.body.slots.name).toBe('second');
  });

  it('notices a replace or delete by the other instance', async () => {
    const id = uniqueId('stale-replace');
    await append(a, id, 'old');
    await request(b.url)
      .put(`/conversations/${id}/tracker/events`)
      .send([{ event: 'slot', timestamp: 1, name: 'name', value: 'replaced' }])
      .expect(200);
    const after = await append(a, id, 'new');
    expect(after.body.events.map((e: { value?: string }) => e.value)).toEqual(['replaced', 'new']);
    await request(b.url).delete(`/conversations/${id}/tracker`).expect(204);
    const fresh = await append(a, id, 'again');
    expect(fresh.body.events).toHaveLength(4);
    expect(fresh.body.events[0].name).toBe('action_session_start');
  });
});
