import { GraphQLSchemaHost } from '@nestjs/graphql';
import { printSchema } from 'graphql';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import { startTestApp, uniqueId, type TestApp } from 'test/utils/create-test-app';
import { fetchToken, graphql, startTestIdp, type TestIdp } from 'test/utils/oidc';
import { DataSource } from 'typeorm';

const RAW = `query Raw($input: RawConversationsInput!) {
  rawConversations(input: $input) { count conversations { id conversationEvents tags { id name } } }
}`;
const ADD = `mutation Add($input: AddConversationTagToConversationInput!) {
  addConversationTagToConversation(input: $input)
}`;
const REMOVE = `mutation Remove($input: RemoveConversationTagFromConversationInput!) {
  removeConversationTagFromConversation(input: $input)
}`;
const DELETE = `mutation Delete($input: DeleteConversationsInput!) { deleteConversations(input: $input) }`;
const CREATE_TAG = `mutation CreateTag($input: CreateConversationTagInput!) {
  createConversationTag(input: $input) { id name assistantId }
}`;
const TAGS = `query Tags($assistantId: ID!) { conversationTags(assistantId: $assistantId) { id name assistantId } }`;
const DELETE_TAG = `mutation DeleteTag($input: DeleteConversationTagInput!) { deleteConversationTag(input: $input) }`;

interface Page {
  count: number;
  conversations: Array<{
    id: string;
    conversationEvents: Array<Record<string, unknown>>;
    tags: Array<{ id: string; name: string }>;
  }>;
}

/** 2026-03-01T10:00:00Z in epoch seconds. */
const T0 = Date.UTC(2026, 2, 1, 10) / 1000;

describe('GraphQL conversation management (POST /api/graphql)', () => {
  let idp: TestIdp;
  let t: TestApp;
  let token: string;

  beforeAll(async () => {
    idp = await startTestIdp();
    t = await startTestApp({
      env: {
        OIDC_ISSUER_URL: idp.issuer,
        GRAPHQL_MAX_LIMIT: '50',
        GRAPHQL_MAX_DELETE_IDS: '5',
      },
    });
    token = await fetchToken(idp);
  });

  afterAll(async () => {
    await t?.close();
    await idp?.close();
  });

  const gql = (query: string, variables: Record<string, unknown> = {}) =>
    graphql(t.url, token, query, variables);

  /** A conversation of `assistantId` started at `start`, through the REST tracker route. */
  async function seedConversation(
    assistantId: string,
    start: number,
    id = uniqueId('gql'),
  ): Promise<string> {
    const metadata = { assistant_id: assistantId, model_id: 'm1' };
    const events = [
      { event: 'action', timestamp: start, name: 'action_session_start', metadata },
      { event: 'session_started', timestamp: start + 0.001, metadata },
      { event: 'action', timestamp: start + 0.002, name: 'action_listen', metadata },
      {
        event: 'user',
        timestamp: start + 1,
        text: 'hello',
        parse_data: { intent: { name: 'greet', confidence: 0.9 }, entities: [] },
        input_channel: 'rest',
        message_id: 'mid-1',
        metadata,
      },
      { event: 'slot', timestamp: start + 1.5, name: 'mood', value: 'great', metadata },
      { event: 'bot', timestamp: start + 2, text: 'Hey!', data: {}, metadata },
    ];
    await request(t.url)
      .post(`/conversations/${encodeURIComponent(id)}/tracker/events`)
      .send(events)
      .expect(200);
    return id;
  }

  async function page(input: Record<string, unknown>): Promise<Page> {
    const res = await gql(RAW, { input });
    expect(res.body.errors).toBeUndefined();
    return res.body.data?.rawConversations as Page;
  }

  async function createTag(assistantId: string, name: string): Promise<string> {
    const res = await gql(CREATE_TAG, { input: { assistantId, name } });
    expect(res.body.errors).toBeUndefined();
    return (res.body.data?.createConversationTag as { id: string }).id;
  }

  it('serves the committed schema (schema.gql does not drift)', () => {
    const sdl = printSchema(t.app.get(GraphQLSchemaHost).schema);
    const file = join(__dirname, '..', '..', 'schema.gql');
    if (process.env.UPDATE_SCHEMA === '1') writeFileSync(file, `${sdl}\n`);
    expect(`${sdl}\n`).toBe(readFileSync(file, 'utf8'));
    // The seed's signatures, to the letter.
    for (const line of [
      'type RawConversation {',
      'conversationEvents: [JSON!]!',
      'id: ID!',
      'conversations: [RawConversation!]!',
      'count: Int!',
      'rawConversations(input: RawConversationsInput!): RawConversationsOutput!',
      'addConversationTagToConversation(input: AddConversationTagToConversationInput!): Boolean!',
      'removeConversationTagFromConversation(input: RemoveConversationTagFromConversationInput!): Boolean!',
      'deleteConversations(input: DeleteConversationsInput!): Int!',
      'conversationIds: [ID!]!',
      'scalar JSON',
      'assistantId: ID!',
      'fromTime: String',
      'toTime: String',
      'limit: Int = 10',
      'offset: Int = 0',
    ]) {
      expect(sdl).toContain(line);
    }
  });

  it('returns the stored events verbatim, in order, each with sender_id', async () => {
    const assistant = uniqueId('bot');
    const id = await seedConversation(assistant, T0);
    const tracker = await request(t.url)
      .get(`/conversations/${id}/tracker?include_events=ALL`)
      .expect(200);
    const stored = tracker.body.events as Array<Record<string, unknown>>;
    const result = await page({ assistantId: assistant });
    expect(result.count).toBe(1);
    expect(result.conversations[0]?.id).toBe(id);
    const events = result.conversations[0]?.conversationEvents ?? [];
    expect(events).toEqual(stored.map((e) => ({ sender_id: id, ...e })));
    expect(events.map((e) => e.event)).toEqual([
      'action',
      'session_started',
      'action',
      'user',
      'slot',
      'bot',
    ]);
    const user = events[3] as { metadata: Record<string, unknown>; parse_data: unknown };
    expect(user.metadata).toMatchObject({ assistant_id: assistant, model_id: 'm1' });
    expect(Object.keys(events[3] ?? {})[0]).toBe('sender_id');
  });

  it('pages newest start first (then id) with a constant count, no overlap and no gap', async () => {
    const assistant = uniqueId('bot');
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) ids.push(await seedConversation(assistant, T0 + i * 60));
    // Two conversations starting at the same instant are ordered by id.
    ids.push(await seedConversation(assistant, T0 + 5 * 60, `${ids[5]}-b`));
    await seedConversation(uniqueId('other'), T0 + 30); // another assistant's: never listed
    const expected = [ids[5], ids[6], ids[4], ids[3], ids[2], ids[1], ids[0]];

    const seen: string[] = [];
    for (const offset of [0, 3, 6]) {
      const p = await page({ assistantId: assistant, limit: 3, offset });
      expect(p.count).toBe(7);
      seen.push(...p.conversations.map((c) => c.id));
    }
    expect(seen).toEqual(expected);
    expect(new Set(seen).size).toBe(7);

    const defaults = await page({ assistantId: assistant });
    expect(defaults.conversations.map((c) => c.id)).toEqual(expected);
    const beyond = await page({ assistantId: assistant, offset: 7 });
    expect(beyond).toEqual({ count: 7, conversations: [] });
    const countOnly = await page({ assistantId: assistant, limit: 0 });
    expect(countOnly).toEqual({ count: 7, conversations: [] });
    expect((await page({ assistantId: uniqueId('nobody') })).count).toBe(0);
  });

  it('defaults to 10 conversations per page', async () => {
    const assistant = uniqueId('bot');
    for (let i = 0; i < 12; i++) await seedConversation(assistant, T0 + i);
    const p = await page({ assistantId: assistant });
    expect(p.count).toBe(12);
    expect(p.conversations).toHaveLength(10);
  });

  it('filters on the conversation start with inclusive bounds, with or without milliseconds', async () => {
    const assistant = uniqueId('bot');
    const at = (s: number) => new Date(s * 1000).toISOString();
    const a = await seedConversation(assistant, T0); // 10:00:00.000
    const b = await seedConversation(assistant, T0 + 60.25); // 10:01:00.250
    const c = await seedConversation(assistant, T0 + 120); // 10:02:00.000
    const ids = async (input: Record<string, unknown>) =>
      (await page({ assistantId: assistant, ...input })).conversations.map((x) => x.id);

    expect(await ids({ fromTime: '2026-03-01T10:00:00Z', toTime: '2026-03-01T10:02:00Z' })).toEqual(
      [c, b, a],
    );
    expect(await ids({ fromTime: at(T0 + 60.25) })).toEqual([c, b]);
    expect(await ids({ toTime: '2026-03-01T10:01:00.250Z' })).toEqual([b, a]);
    expect(await ids({ toTime: '2026-03-01T10:01:00.249Z' })).toEqual([a]);
    expect(await ids({ fromTime: '2026-03-01T10:01:00.251Z' })).toEqual([c]);
    expect(
      await ids({ fromTime: '2026-03-01T10:02:00.000Z', toTime: '2026-03-01T10:02:00Z' }),
    ).toEqual([c]);
    const filtered = await page({
      assistantId: assistant,
      fromTime: '2026-03-01T10:00:00.001Z',
      limit: 1,
    });
    expect(filtered.count).toBe(2);
    expect(filtered.conversations.map((x) => x.id)).toEqual([c]);

    for (const bad of [
      '2026-03-01',
      '2026-03-01T10:00:00',
      '2026-03-01T10:00:00+01:00',
      'soon',
      '2026-03-01T10:00:00.5Z',
    ]) {
      const res = await gql(RAW, { input: { assistantId: assistant, fromTime: bad } });
      expect(res.body.data).toBeNull();
      expect(res.body.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
      expect(res.body.errors?.[0]?.message).toContain('fromTime');
    }
  });

  it('refuses limits beyond the configured maximum and negative paging with BAD_USER_INPUT', async () => {
    for (const input of [{ limit: 51 }, { limit: -1 }, { offset: -5 }]) {
      const res = await gql(RAW, { input: { assistantId: 'x', ...input } });
      expect(res.body.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    }
    expect((await page({ assistantId: 'x', limit: 50 })).conversations).toEqual([]);
    const wrongType = await gql(RAW, { input: { assistantId: 'x', limit: 'ten' } });
    expect(wrongType.body.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
  });

  it('tags: create, list, add idempotently, show on the conversation, remove always true', async () => {
    const assistant = uniqueId('bot');
    const id = await seedConversation(assistant, T0);
    const tag = await createTag(assistant, 'needs review');
    expect(await createTag(assistant, '  needs review ')).toBe(tag); // idempotent by name
    const other = await createTag(assistant, 'escalated');
    const listed = await gql(TAGS, { assistantId: assistant });
    expect(listed.body.data?.conversationTags).toEqual([
      { id: other, name: 'escalated', assistantId: assistant },
      { id: tag, name: 'needs review', assistantId: assistant },
    ]);

    for (let i = 0; i < 2; i++) {
      const added = await gql(ADD, { input: { conversationId: id, tagId: tag } });
      expect(added.body).toEqual({ data: { addConversationTagToConversation: true } });
    }
    const tagged = await page({ assistantId: assistant });
    expect(tagged.conversations[0]?.tags).toEqual([{ id: tag, name: 'needs review' }]);

    for (let i = 0; i < 2; i++) {
      const removed = await gql(REMOVE, { input: { conversationId: id, tagId: tag } });
      expect(removed.body).toEqual({ data: { removeConversationTagFromConversation: true } });
    }
    for (const input of [
      { conversationId: 'no-such-conversation', tagId: tag },
      { conversationId: id, tagId: '00000000-0000-4000-8000-000000000000' },
      { conversationId: id, tagId: 'not-a-uuid' },
    ]) {
      const removed = await gql(REMOVE, { input });
      expect(removed.body).toEqual({ data: { removeConversationTagFromConversation: true } });
    }
    expect((await page({ assistantId: assistant })).conversations[0]?.tags).toEqual([]);

    await gql(ADD, { input: { conversationId: id, tagId: other } });
    const deleted = await gql(DELETE_TAG, { input: { tagId: other } });
    expect(deleted.body.data?.deleteConversationTag).toBe(true);
    expect(
      (await gql(DELETE_TAG, { input: { tagId: other } })).body.data?.deleteConversationTag,
    ).toBe(false);
    expect((await page({ assistantId: assistant })).conversations[0]?.tags).toEqual([]);

    const blank = await gql(CREATE_TAG, { input: { assistantId: assistant, name: '   ' } });
    expect(blank.body.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
  });

  it('filters on tags (every one given), with the count of the matches and paging', async () => {
    const assistant = uniqueId('bot');
    const a = await seedConversation(assistant, T0);
    const b = await seedConversation(assistant, T0 + 60);
    const c = await seedConversation(assistant, T0 + 120);
    const red = await createTag(assistant, 'red');
    const blue = await createTag(assistant, 'blue');
    for (const [conversationId, tagId] of [
      [a, red],
      [b, red],
      [b, blue],
      [c, blue],
    ]) {
      await gql(ADD, { input: { conversationId, tagId } });
    }
    const ids = (p: Page) => p.conversations.map((x) => x.id);
    const reds = await page({ assistantId: assistant, tagIds: [red] });
    expect([reds.count, ids(reds)]).toEqual([2, [b, a]]);
    const both = await page({ assistantId: assistant, tagIds: [red, blue, red] });
    expect([both.count, ids(both)]).toEqual([1, [b]]);
    const second = await page({ assistantId: assistant, tagIds: [blue], limit: 1, offset: 1 });
    expect([second.count, ids(second)]).toEqual([2, [b]]);
    const windowed = await page({
      assistantId: assistant,
      tagIds: [blue],
      fromTime: new Date((T0 + 100) * 1000).toISOString(),
    });
    expect([windowed.count, ids(windowed)]).toEqual([1, [c]]);
    const none = await page({ assistantId: assistant, tagIds: [red, 'not-a-uuid'] });
    expect([none.count, ids(none)]).toEqual([0, []]);
    const all = await page({ assistantId: assistant, tagIds: [] });
    expect(all.count).toBe(3);
  });

  it('tags: unknown conversation, unknown tag and a tag of another assistant are coded errors', async () => {
    const assistant = uniqueId('bot');
    const id = await seedConversation(assistant, T0);
    const tag = await createTag(assistant, 'ok');
    const foreign = await createTag(uniqueId('other'), 'foreign');
    const cases: Array<[Record<string, string>, string, string]> = [
      [
        { conversationId: 'no-such-conversation', tagId: tag },
        'NOT_FOUND',
        'CONVERSATIONS.CONVERSATION_NOT_FOUND',
      ],
      [
        { conversationId: id, tagId: '00000000-0000-4000-8000-000000000000' },
        'NOT_FOUND',
        'CONVERSATIONS.TAG_NOT_FOUND',
      ],
      [{ conversationId: id, tagId: 'not-a-uuid' }, 'NOT_FOUND', 'CONVERSATIONS.TAG_NOT_FOUND'],
      [
        { conversationId: id, tagId: foreign },
        'BAD_USER_INPUT',
        'CONVERSATIONS.TAG_OF_OTHER_ASSISTANT',
      ],
    ];
    for (const [input, code, reason] of cases) {
      const res = await gql(ADD, { input });
      expect(res.body.data).toBeNull();
      const error = res.body.errors?.[0];
      expect(error?.extensions).toMatchObject({ code, reason });
      expect(error?.path).toEqual(['addConversationTagToConversation']);
      expect(error?.message.length).toBeGreaterThan(10);
      expect(JSON.stringify(res.body)).not.toMatch(/stacktrace|originalError|at .*\.ts/);
    }
    expect((await page({ assistantId: assistant })).conversations[0]?.tags).toEqual([]);
  });

  it('deletes conversations with their events and tag links, counting only the ones that existed', async () => {
    const assistant = uniqueId('bot');
    const a = await seedConversation(assistant, T0);
    const b = await seedConversation(assistant, T0 + 1);
    const c = await seedConversation(assistant, T0 + 2);
    const tag = await createTag(assistant, 'doomed');
    await gql(ADD, { input: { conversationId: a, tagId: tag } });

    const res = await gql(DELETE, { input: { conversationIds: [a, a, 'unknown-id', b] } });
    expect(res.body).toEqual({ data: { deleteConversations: 2 } });
    await request(t.url).get(`/conversations/${a}/story`).expect(200);
    await request(t.url).delete(`/conversations/${a}/tracker`).expect(404);
    const db = t.app.get(DataSource);
    const [left] = await db.query<Array<{ events: number; links: number }>>(
      `SELECT (SELECT count(*) FROM conversation_event WHERE conversation_id = ANY($1))::int AS events,
              (SELECT count(*) FROM conversation_tag_link WHERE conversation_id = ANY($1))::int AS links`,
      [[a, b]],
    );
    expect(left).toEqual({ events: 0, links: 0 });
    expect((await page({ assistantId: assistant })).conversations.map((x) => x.id)).toEqual([c]);

    expect((await gql(DELETE, { input: { conversationIds: [a, 'nope', 'nope'] } })).body).toEqual({
      data: { deleteConversations: 0 },
    });
    expect((await gql(DELETE, { input: { conversationIds: [] } })).body).toEqual({
      data: { deleteConversations: 0 },
    });
    const tooMany = await gql(DELETE, { input: { conversationIds: [c, '1', '2', '3', '4', '5'] } });
    expect(tooMany.body.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(tooMany.body.errors?.[0]?.message).toContain('at most 5');
    expect((await page({ assistantId: assistant })).count).toBe(1); // nothing deleted
  });

  it('keeps a conversation listed after more turns, and its tags across a replace of its events', async () => {
    const assistant = uniqueId('bot');
    const id = await seedConversation(assistant, T0);
    const tag = await createTag(assistant, 'kept');
    await gql(ADD, { input: { conversationId: id, tagId: tag } });
    await request(t.url)
      .post(`/conversations/${id}/messages`)
      .send({ text: '/greet', sender: 'user' })
      .expect(200);
    const events = (await page({ assistantId: assistant })).conversations[0]?.conversationEvents;
    expect(events?.at(-1)).toMatchObject({ sender_id: id, event: 'user', text: '/greet' });

    const metadata = { assistant_id: assistant };
    await request(t.url)
      .put(`/conversations/${id}/tracker/events`)
      .send([{ event: 'action', timestamp: T0 + 5, name: 'action_listen', metadata }])
      .expect(200);
    const replaced = (await page({ assistantId: assistant })).conversations[0];
    expect(replaced?.conversationEvents).toHaveLength(1);
    expect(replaced?.tags.map((x) => x.id)).toEqual([tag]);
  });

  it('lists conversations whose events carry no assistant id under placeholder_default', async () => {
    const id = uniqueId('plain');
    await request(t.url)
      .put(`/conversations/${id}/tracker/events`)
      .send([{ event: 'action', timestamp: T0 - 3600, name: 'action_listen' }])
      .expect(200);
    const listed = await page({
      assistantId: 'placeholder_default',
      toTime: '2026-03-01T09:00:00Z',
      fromTime: '2026-03-01T09:00:00Z',
    });
    expect(listed.conversations.map((c) => c.id)).toEqual([id]);
    const tag = await createTag('placeholder_default', 'unassigned');
    const added = await gql(ADD, { input: { conversationId: id, tagId: tag } });
    expect(added.body).toEqual({ data: { addConversationTagToConversation: true } });
    // The first event that names an assistant assigns the conversation to it (and its count).
    const late = uniqueId('late');
    const before = (await page({ assistantId: 'placeholder_default' })).count;
    await request(t.url)
      .post(`/conversations/${id}/tracker/events`)
      .send([
        {
          event: 'slot',
          timestamp: T0,
          name: 'mood',
          value: 'sad',
          metadata: { assistant_id: late },
        },
      ])
      .expect(200);
    const moved = await page({ assistantId: late });
    expect(moved.count).toBe(1);
    expect(moved.conversations.map((c) => c.id)).toEqual([id]);
    expect((await page({ assistantId: 'placeholder_default' })).count).toBe(before - 1);
  });

  it('refuses cross-site requests (CSRF prevention) and batches', async () => {
    const simple = await fetch(`${t.url}/api/graphql`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'text/plain' },
      body: JSON.stringify({ query: DELETE, variables: { input: { conversationIds: ['x'] } } }),
    });
    expect(simple.status).toBe(400);
    const viaGet = await fetch(
      `${t.url}/api/graphql?query=${encodeURIComponent('{ conversationTags(assistantId: "x") { id } }')}`,
      { headers: { Authorization: `Bearer ${token}` } },
    );
    expect(viaGet.status).toBe(400);
    expect(await viaGet.text()).toMatch(/CSRF|preflight/i);
  });
});
