'use strict';
/* global __filename, fetch, URLSearchParams -- Node globals missing from the repo's eslint JS globals */
// GraphQL conversation-management benchmark: rawConversations pages and tag mutations over HTTP
// on a store seeded with 100,000 conversations / 1,000,000 events.
//
//   npm run build && node bench/graphql.js [--conversations 100000] [--events 10] [--samples 200]
//
// Seeding is one INSERT … SELECT FROM generate_series per table (no HTTP, no per-row round
// trips): conversations of assistant "bench" starting one minute apart, each with --events
// events (session start, user/action/bot turns) whose metadata carries assistant_id/model_id,
// plus 10 % as many conversations of another assistant. Then, sequentially over one keep-alive
// connection, with a bearer token from the embedded identity provider (client credentials):
//   (a) first page: rawConversations(limit 10) with every event        — target p50 < 50 ms
//   (b) deep offset: offset 90 % of the conversations                  — target p50 < 50 ms
//   (c) time-filtered: a 7-day window in the middle (count + page)      — target p50 < 50 ms
//   (d) addConversationTagToConversation / (e) removeConversationTagFromConversation
// Parley runs in a child process. Database: DATABASE_URL's server (a fresh parley_bench_<ts>
// database, dropped afterwards) or a throwaway embedded PostgreSQL. Results: console table and
// bench/results/graphql.json.
const { mkdirSync, mkdtempSync, rmSync, writeFileSync } = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const {
  check,
  cleanupStack,
  forkServer,
  loadAverage,
  machine,
  need,
  round,
  serveOverIpc,
  startDatabase,
} = require('./lib/http-bench');

const ROOT = path.resolve(__dirname, '..');
const RESULTS = path.join(__dirname, 'results', 'graphql.json');
const REALM_FILE = path.join(ROOT, 'keycloak', 'parley-realm.json');
const CLIENT_SECRET = 'bench-secret';
const TARGET_P50_MS = 50;
const WARMUP = 20;
const T0 = Date.UTC(2026, 0, 1) / 1000;

function parseArgs(argv) {
  const opts = { conversations: 100_000, events: 10, samples: 200 };
  for (let i = 0; i < argv.length; i++) {
    const key = argv[i].replace(/^--/, '');
    if (!(key in opts)) {
      throw new Error(`unknown option ${argv[i]} (known: ${Object.keys(opts).join(', ')})`);
    }
    const value = Number(argv[++i]);
    if (!Number.isInteger(value) || value < 1) throw new Error(`--${key} needs a positive integer`);
    opts[key] = value;
  }
  return opts;
}

// Child: `node bench/graphql.js --serve`, a Parley app accepting the given issuer's tokens.
async function serveParley() {
  const { createParleyApp } = need('bootstrap/create-app.js');
  const { validateEnv } = need('platform/config/validate-env.js');
  const url = process.env.BENCH_DATABASE_URL;
  const config = validateEnv({
    PARLEY_ENABLE_API: 'true',
    LOG_LEVEL: 'silent',
    DATABASE_URL: url,
    DATABASE_POOL_SIZE: '10',
    OIDC_ISSUER_URL: process.env.BENCH_ISSUER,
  });
  const app = await createParleyApp(config, url);
  await app.listen(0, '127.0.0.1');
  serveOverIpc(app);
}

/** 100k conversations / 1M events with generate_series: one statement per table. */
async function seed(databaseUrl, opts) {
  const { Client } = require('pg');
  const client = new Client({ connectionString: databaseUrl });
  await client.connect();
  const started = Date.now();
  const other = Math.max(1, Math.floor(opts.conversations / 10));
  const n = opts.events;
  try {
    await client.query(
      `INSERT INTO conversation (id, started_at, latest_event_time, last_seq, session_start_seq, assistant_id)
       SELECT 'conv-' || i, $1::float8 + i * 60, $1::float8 + i * 60 + $2::int, $2::int, 1,
              CASE WHEN i <= $3::int THEN 'bench' ELSE 'other' END
       FROM generate_series(1, $3::int + $4::int) AS i`,
      [T0, n, opts.conversations, other],
    );
    await client.query(
      `INSERT INTO conversation_event (conversation_id, seq, type_name, "timestamp", intent_name, action_name, data)
       SELECT 'conv-' || i, s, k.type, k.ts, k.intent, k.action,
              (jsonb_build_object('event', k.type, 'timestamp', k.ts,
                'metadata', json_build_object('model_id', 'bench-model',
                  'assistant_id', CASE WHEN i <= $3::int THEN 'bench' ELSE 'other' END))
                || k.extra)::json
       FROM generate_series(1, $3::int + $4::int) AS i, generate_series(1, $2::int) AS s,
       LATERAL (SELECT $1::float8 + i * 60 + s AS ts,
         CASE WHEN s = 1 THEN 'action' WHEN s = 2 THEN 'session_started'
              WHEN s % 3 = 0 THEN 'user' WHEN s % 3 = 1 THEN 'action' ELSE 'bot' END AS type,
         CASE WHEN s > 2 AND s % 3 = 0 THEN 'greet' END AS intent,
         CASE WHEN s = 1 THEN 'action_session_start' WHEN s > 2 AND s % 3 = 1 THEN 'utter_greet' END AS action,
         CASE WHEN s = 1 THEN '{"name": "action_session_start", "policy": null, "confidence": 1}'::jsonb
              WHEN s = 2 THEN '{}'::jsonb
              WHEN s % 3 = 0 THEN jsonb_build_object('text', 'hello ' || i, 'parse_data',
                jsonb_build_object('intent', '{"name": "greet", "confidence": 0.98}'::jsonb, 'entities', '[]'::jsonb,
                  'text', 'hello ' || i), 'input_channel', 'rest', 'message_id', md5(i || '-' || s))
              WHEN s % 3 = 1 THEN '{"name": "utter_greet", "policy": "RulePolicy", "confidence": 1}'::jsonb
              ELSE '{"text": "Hey! How are you?", "data": {}}'::jsonb END AS extra) AS k`,
      [T0, n, opts.conversations, other],
    );
    // What autovacuum does soon after a bulk load: statistics, and the visibility map that lets
    // count(*) and deep offsets run as index-only scans.
    await client.query('VACUUM ANALYZE conversation');
    await client.query('VACUUM ANALYZE conversation_event');
    const { rows } = await client.query(
      'SELECT (SELECT count(*) FROM conversation)::int AS c, (SELECT count(*) FROM conversation_event)::int AS e',
    );
    return { conversations: rows[0].c, events: rows[0].e, ms: Date.now() - started };
  } finally {
    await client.end();
  }
}

async function gql(url, token, query, variables) {
  const started = process.hrtime.bigint();
  const res = await fetch(`${url}/api/graphql`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${token}` },
    body: JSON.stringify({ query, variables }),
  });
  const body = await res.json();
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  check(
    res.status === 200 && !body.errors,
    `GraphQL answered ${res.status} ${JSON.stringify(body).slice(0, 300)}`,
  );
  return { ms, data: body.data };
}

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

async function sample(name, samples, run) {
  for (let i = 0; i < WARMUP; i++) await run(i);
  const times = [];
  for (let i = 0; i < samples; i++) times.push((await run(i + WARMUP)).ms);
  times.sort((a, b) => a - b);
  return {
    name,
    samples,
    p50: round(percentile(times, 50)),
    p99: round(percentile(times, 99)),
    max: round(times[times.length - 1]),
  };
}

const RAW = `query Raw($input: RawConversationsInput!) {
  rawConversations(input: $input) { count conversations { id conversationEvents } }
}`;

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  const load = loadAverage({ warn: true });
  const stack = cleanupStack();
  try {
    const db = await startDatabase();
    stack.push(() => db.stop());
    const { startEmbeddedIdp } = need('modules/auth/oidc/embedded-idp/embedded-idp.launcher.js');
    const keysDir = mkdtempSync(path.join(os.tmpdir(), 'parley-bench-idp-'));
    stack.push(async () => rmSync(keysDir, { recursive: true, force: true }));
    const idp = await startEmbeddedIdp({
      realm: 'parley',
      realmFile: REALM_FILE,
      keysFile: path.join(keysDir, 'keys.json'),
      port: 0,
      env: { ...process.env, PARLEY_OIDC_CLIENT_SECRET: CLIENT_SECRET },
    });
    stack.push(() => idp.stop());
    const server = await forkServer(__filename, ['--serve'], 'parley', {
      BENCH_DATABASE_URL: db.url,
      BENCH_ISSUER: idp.issuer,
    });
    stack.push(() => server.close());

    console.log(
      `seeding ${opts.conversations} conversations × ${opts.events} events (${db.kind}) …`,
    );
    const seeded = await seed(db.url, opts);
    console.log(
      `seeded ${seeded.conversations} conversations / ${seeded.events} events in ${seeded.ms} ms`,
    );

    const tokenRes = await fetch(`${idp.issuer}/protocol/openid-connect/token`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: 'parley-external',
        client_secret: CLIENT_SECRET,
      }),
    });
    const { access_token: token } = await tokenRes.json();
    check(typeof token === 'string', 'no access token');

    const n = opts.conversations;
    const deepOffset = Math.floor(n * 0.9);
    const from = new Date((T0 + Math.floor(n / 2) * 60) * 1000).toISOString();
    const to = new Date((T0 + Math.floor(n / 2) * 60 + 7 * 86_400) * 1000).toISOString();
    const results = [];

    const first = await gql(server.url, token, RAW, { input: { assistantId: 'bench' } });
    check(
      first.data.rawConversations.count === n,
      `count ${first.data.rawConversations.count} != ${n}`,
    );
    check(
      first.data.rawConversations.conversations.length === 10,
      'first page has 10 conversations',
    );
    check(first.data.rawConversations.conversations[0].id === `conv-${n}`, 'newest first');
    check(
      first.data.rawConversations.conversations[0].conversationEvents.length === opts.events,
      'all events',
    );
    results.push(
      await sample('(a) first page, limit 10', opts.samples, () =>
        gql(server.url, token, RAW, { input: { assistantId: 'bench' } }),
      ),
    );
    results.push(
      await sample(`(b) deep offset ${deepOffset}`, opts.samples, () =>
        gql(server.url, token, RAW, { input: { assistantId: 'bench', offset: deepOffset } }),
      ),
    );
    const window = await gql(server.url, token, RAW, {
      input: { assistantId: 'bench', fromTime: from, toTime: to },
    });
    const half = Math.floor(n / 2);
    const expectedWindow = Math.min(n, half + 7 * 1440) - half + 1;
    check(
      window.data.rawConversations.count === expectedWindow,
      `window count ${window.data.rawConversations.count}`,
    );
    results.push(
      await sample('(c) 7-day window, limit 10', opts.samples, () =>
        gql(server.url, token, RAW, {
          input: { assistantId: 'bench', fromTime: from, toTime: to },
        }),
      ),
    );

    const tag = await gql(
      server.url,
      token,
      'mutation T($input: CreateConversationTagInput!) { createConversationTag(input: $input) { id } }',
      { input: { assistantId: 'bench', name: 'bench' } },
    );
    const tagId = tag.data.createConversationTag.id;
    const pick = (i) => `conv-${1 + ((i * 7919) % n)}`;
    results.push(
      await sample('(d) addConversationTagToConversation', opts.samples, (i) =>
        gql(
          server.url,
          token,
          'mutation A($input: AddConversationTagToConversationInput!) { addConversationTagToConversation(input: $input) }',
          { input: { conversationId: pick(i), tagId } },
        ),
      ),
    );
    results.push(
      await sample('(e) removeConversationTagFromConversation', opts.samples, (i) =>
        gql(
          server.url,
          token,
          'mutation R($input: RemoveConversationTagFromConversationInput!) { removeConversationTagFromConversation(input: $input) }',
          { input: { conversationId: pick(i), tagId } },
        ),
      ),
    );

    console.table(
      results.map((r) => ({ run: r.name, 'p50 ms': r.p50, 'p99 ms': r.p99, 'max ms': r.max })),
    );
    for (const r of results.slice(0, 3)) {
      console.log(
        `${r.p50 < TARGET_P50_MS ? 'PASS' : 'FAIL'} ${r.name}: p50 ${r.p50} ms (target < ${TARGET_P50_MS} ms)`,
      );
    }
    mkdirSync(path.dirname(RESULTS), { recursive: true });
    writeFileSync(
      RESULTS,
      JSON.stringify(
        { opts, seeded, results, machine: machine(), load, database: db.kind },
        null,
        2,
      ),
    );
    console.log(`results: ${path.relative(ROOT, RESULTS)}`);
  } finally {
    await stack.run();
  }
}

if (process.argv[2] === '--serve') {
  serveParley().catch((e) => {
    console.error(e);
    process.exit(1);
  });
} else {
  main().catch((e) => {
    console.error(e);
    process.exitCode = 1;
  });
}
