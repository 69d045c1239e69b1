import request from 'supertest';
import { startTestApp, uniqueId, type TestApp } from 'test/utils/create-test-app';
import { fetchToken, graphql, startTestIdp, type TestIdp } from 'test/utils/oidc';

const RAW = `query Raw($input: RawConversationsInput!) {
  rawConversations(input: $input) { count conversations { id eventCount conversationEvents } }
}`;

interface Conversation {
  id: string;
  eventCount: number;
  conversationEvents: Array<Record<string, unknown>>;
}

/** A slot value of about 300 bytes. */
const note = (i: number): string => `${i}:${'x'.repeat(280)}`;

/** Events per test conversation, most about 360 bytes of stored JSON. */
const EVENTS = 120;
const MAX_EVENTS = 50;
const MAX_ANSWER_BYTES = 8192;

describe('GraphQL answer and document bounds', () => {
  let idp: TestIdp;
  let t: TestApp;
  let token: string;

  beforeAll(async () => {
    idp = await startTestIdp();
    t = await startTestApp({
      env: {
        OIDC_ISSUER_URL: idp.issuer,
        GRAPHQL_MAX_EVENTS: String(MAX_EVENTS),
        GRAPHQL_MAX_ANSWER_BYTES: String(MAX_ANSWER_BYTES),
        GRAPHQL_MAX_COMPLEXITY: '200',
        GRAPHQL_MAX_QUERY_BYTES: '4096',
      },
    });
    token = await fetchToken(idp);
  });

  afterAll(async () => {
    await t?.close();
    await idp?.close();
  });

  const gql = (query: string, variables: Record<string, unknown> = {}, operationName?: string) =>
    fetch(`${t.url}/api/graphql`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${token}` },
      body: JSON.stringify({ query, variables, ...(operationName ? { operationName } : {}) }),
    }).then(async (res) => ({
      status: res.status,
      body: (await res.json()) as {
        data?: Record<string, unknown> | null;
        errors?: Array<{ message: string; extensions?: Record<string, unknown> }>;
      },
    }));

  /** A conversation of `EVENTS` slot events, stored through the REST tracker route. */
  async function seedLongConversation(assistantId: string): Promise<string> {
    const id = uniqueId('long');
    const metadata = { assistant_id: assistantId };
    const start = 1_770_000_000;
    // A session start of its own, as a channel writes it, so no default session start is added.
    const events: Array<Record<string, unknown>> = [
      { event: 'action', timestamp: start, name: 'action_session_start', metadata },
      { event: 'session_started', timestamp: start + 0.001, metadata },
      { event: 'action', timestamp: start + 0.002, name: 'action_listen', metadata },
    ];
    for (let i = events.length; i < EVENTS; i++) {
      events.push({ event: 'slot', timestamp: start + i, name: 'note', value: note(i), metadata });
    }
    await request(t.url).post(`/conversations/${id}/tracker/events`).send(events).expect(200);
    return id;
  }

  function expectBadInput(
    res: Awaited<ReturnType<typeof gql>>,
    message: RegExp,
    code = 'BAD_USER_INPUT',
  ): void {
    expect(res.body.errors).toHaveLength(1);
    expect(res.body.errors?.[0]?.extensions?.code).toBe(code);
    expect(res.body.errors?.[0]?.message).toMatch(message);
    expect(res.body.data ?? null).toBeNull();
  }

  it('refuses an answer over the event or byte bound, naming it, and pages a long conversation', async () => {
    const assistantId = uniqueId('asst');
    const id = await seedLongConversation(assistantId);

    // All 120 events at once: over GRAPHQL_MAX_EVENTS.
    const all = await gql(RAW, { input: { assistantId } });
    expectBadInput(all, /120 events.*at most 50 \(GRAPHQL_MAX_EVENTS\)/);
    // 40 events fit the event bound but not the byte bound.
    const heavy = await gql(RAW, { input: { assistantId, eventLimit: 40 } });
    expectBadInput(heavy, /bytes of events.*at most 8192 \(GRAPHQL_MAX_ANSWER_BYTES\)/);

    // Without events selected the page costs nothing of the budget.
    const counts = await gql(
      `query C($input: RawConversationsInput!) { rawConversations(input: $input) { count conversations { id eventCount } } }`,
      { input: { assistantId } },
    );
    expect(counts.body).toEqual({
      data: { rawConversations: { count: 1, conversations: [{ id, eventCount: EVENTS }] } },
    });

    // Pages of 15 events give every event once, in order.
    const seen: Array<Record<string, unknown>> = [];
    for (let offset = 0; offset < EVENTS + 15; offset += 15) {
      const res = await gql(RAW, { input: { assistantId, eventOffset: offset, eventLimit: 15 } });
      expect(res.body.errors).toBeUndefined();
      const page = res.body.data?.rawConversations as { conversations: Conversation[] };
      const conversation = page.conversations[0];
      expect(conversation?.eventCount).toBe(EVENTS);
      expect(conversation?.conversationEvents.length).toBe(
        Math.max(0, Math.min(15, EVENTS - offset)),
      );
      seen.push(...(conversation?.conversationEvents ?? []));
    }
    expect(seen.map((e) => e.event)).toEqual([
      'action',
      'session_started',
      'action',
      ...Array.from({ length: EVENTS - 3 }, () => 'slot'),
    ]);
    expect(seen.slice(3).map((e) => e.value)).toEqual(
      Array.from({ length: EVENTS - 3 }, (_, i) => note(i + 3)),
    );
    expect(seen.every((e) => e.sender_id === id)).toBe(true);

    // The budget is one per answer: two aliases of 8 events each fit, four do not.
    const twice = (n: number) =>
      `query A($input: RawConversationsInput!) { ${Array.from(
        { length: n },
        (_, i) => `a${i}: rawConversations(input: $input) { conversations { conversationEvents } }`,
      ).join(' ')} }`;
    const two = await gql(twice(2), { input: { assistantId, eventLimit: 8 } });
    expect(two.body.errors).toBeUndefined();
    const four = await gql(twice(4), { input: { assistantId, eventLimit: 8 } });
    expect(four.body.data).toBeNull();
    expect(four.body.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(four.body.errors?.[0]?.message).toMatch(/GRAPHQL_MAX_ANSWER_BYTES/);
  });

  it('counts every alias of a root field: a cap on root fields, and each one costs', async () => {
    const aliases = (n: number) =>
      `{ ${Array.from(
        { length: n },
        (_, i) => `a${i}: rawConversations(input: { assistantId: "x", limit: 0 }) { count }`,
      ).join(' ')} }`;
    // 1,000 aliases: the document bound (4096 bytes here) stops it before parsing…
    const huge = await gql(aliases(1000));
    expect(huge.status).toBe(400);
    expectBadInput(huge, /longer than 4096 bytes \(GRAPHQL_MAX_QUERY_BYTES\)/);
    // …and with short aliases still the root-field cap (default 20) does.
    const short = `{ ${Array.from({ length: 60 }, (_, i) => `a${i}:conversationTags(assistantId:"x"){id}`).join(' ')} }`;
    const capped = await gql(short);
    expectBadInput(capped, /selects 60 root fields.*maximum is 20/, 'GRAPHQL_VALIDATION_FAILED');
    // Within the cap, each alias costs: 10 aliases of a cheap field pass 200…
    const within = await gql(aliases(10));
    expect(within.body.errors).toBeUndefined();
    // …19 do not (each root field costs 10 on top of its selection).
    const costly = await gql(aliases(19));
    expect(costly.status).toBe(400);
    expect(costly.body.errors?.[0]?.extensions?.code).toBe('QUERY_TOO_COMPLEX');
  });

  it('answers fragment cycles, fragment bombs and deep documents with GRAPHQL_VALIDATION_FAILED', async () => {
    const cycle = await gql(`
      query Q { conversationTags(assistantId: "x") { ...A } }
      fragment A on ConversationTag { id ...B }
      fragment B on ConversationTag { name ...A }`);
    expect(cycle.status).toBe(400);
    expect(cycle.body.errors?.length).toBeGreaterThan(0);
    for (const error of cycle.body.errors ?? []) {
      expect(error.extensions?.code).toBe('GRAPHQL_VALIDATION_FAILED');
    }
    expect(JSON.stringify(cycle.body)).toMatch(/Cannot spread fragment/);

    // The schema has no subscription type: a validation error, not an execution failure.
    const subscription = await gql('subscription { __typename }');
    expect(subscription.status).toBe(400);
    expect(subscription.body.errors?.[0]?.extensions?.code).toBe('GRAPHQL_VALIDATION_FAILED');
    expect(subscription.body.errors?.[0]?.message).toContain('no subscription operations');

    // Each fragment spreads the next one ten times: 10^6 selections once expanded.
    const bomb = [
      `query Q { conversationTags(assistantId: "x") { ...F0 } }`,
      ...Array.from({ length: 6 }, (_, i) =>
        i === 5
          ? `fragment F${i} on ConversationTag { id }`
          : `fragment F${i} on ConversationTag { ${Array.from({ length: 10 }, () => `...F${i + 1}`).join(' ')} }`,
      ),
    ].join('\n');
    const bombed = await gql(bomb);
    expect(bombed.status).toBe(400);
    expect(bombed.body.errors?.[0]?.extensions?.code).toBe('GRAPHQL_VALIDATION_FAILED');

    const nested = (levels: number): string =>
      levels === 0 ? 'name' : `ofType { ${nested(levels - 1)} }`;
    const deep = await gql(`{ __schema { types { fields { type { ${nested(8)} } } } } }`);
    expectBadInput(deep, /maximum depth of 10 \(GRAPHQL_MAX_DEPTH\)/, 'GRAPHQL_VALIDATION_FAILED');
  });

  it('answers an unknown operationName with BAD_USER_INPUT', async () => {
    const res = await gql(
      `query Known { conversationTags(assistantId: "x") { id } }`,
      {},
      'Unknown',
    );
    expect(res.status).toBe(400);
    expectBadInput(res, /Unknown/);
    // An anonymous operation asked for by a name it does not have.
    const anonymous = await gql(`{ conversationTags(assistantId: "x") { id } }`, {}, 'Other');
    expect(anonymous.status).toBe(400);
    expectBadInput(anonymous, /Unknown operation named "Other"/);
    const picked = await gql(
      `query One { conversationTags(assistantId: "x") { id } } query Two { conversationTags(assistantId: "y") { id } }`,
      {},
      'Two',
    );
    expect(picked.body).toEqual({ data: { conversationTags: [] } });
  });

  it('refuses NUL characters in string arguments with BAD_USER_INPUT, nothing stored', async () => {
    const assistantId = uniqueId('nul');
    const create = `mutation C($input: CreateConversationTagInput!) { createConversationTag(input: $input) { id } }`;
    const viaVariable = await gql(create, { input: { assistantId, name: 'bad\u0000name' } });
    expect(viaVariable.status).toBe(400);
    expectBadInput(viaVariable, /NUL/);
    const viaLiteral = await gql(
      `mutation { createConversationTag(input: { assistantId: "${assistantId}", name: "a\\u0000b" }) { id } }`,
    );
    expectBadInput(viaLiteral, /NUL/);
    const inId = await gql(RAW, { input: { assistantId: `x\u0000y` } });
    expectBadInput(inId, /NUL/);
    const tags = await gql(`query T($a: ID!) { conversationTags(assistantId: $a) { id } }`, {
      a: assistantId,
    });
    expect(tags.body).toEqual({ data: { conversationTags: [] } });
  });
});

describe('GraphQL introspection in production', () => {
  let idp: TestIdp;
  let production: TestApp;
  let allowed: TestApp;

  beforeAll(async () => {
    idp = await startTestIdp();
    production = await startTestApp({
      env: { OIDC_ISSUER_URL: idp.issuer, NODE_ENV: 'production' },
    });
    allowed = await startTestApp({
      env: { OIDC_ISSUER_URL: idp.issuer, NODE_ENV: 'production', GRAPHQL_INTROSPECTION: 'true' },
    });
  });

  afterAll(async () => {
    await production?.close();
    await allowed?.close();
    await idp?.close();
  });

  it('is off with NODE_ENV=production unless GRAPHQL_INTROSPECTION=true', async () => {
    const token = await fetchToken(idp);
    const off = await graphql(production.url, token, '{ __schema { queryType { name } } }');
    expect(off.status).toBe(400);
    expect(off.body.errors?.[0]?.extensions?.code).toBe('GRAPHQL_VALIDATION_FAILED');
    expect(off.body.errors?.[0]?.message).toMatch(/introspection/i);
    // Nor do validation errors spell out the schema with suggestions.
    const typo = await graphql(
      production.url,
      token,
      '{ conversationTag(assistantId: "x") { id } }',
    );
    expect(typo.body.errors?.[0]?.extensions?.code).toBe('GRAPHQL_VALIDATION_FAILED');
    expect(typo.body.errors?.[0]?.message).not.toMatch(/Did you mean/);
    const suggested = await graphql(
      allowed.url,
      token,
      '{ conversationTag(assistantId: "x") { id } }',
    );
    expect(suggested.body.errors?.[0]?.message).toMatch(/Did you mean "conversationTags"/);
    const on = await graphql(allowed.url, token, '{ __schema { queryType { name } } }');
    expect(on.body).toEqual({ data: { __schema: { queryType: { name: 'Query' } } } });
    // Ordinary operations still work in production.
    const tags = await graphql(
      production.url,
      token,
      '{ conversationTags(assistantId: "x") { id } }',
    );
    expect(tags.body).toEqual({ data: { conversationTags: [] } });
  });
});
