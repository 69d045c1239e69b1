import fc from 'fast-check';
import {
  AUTH_TOKEN,
  checkGraphql,
  checkRest,
  holds,
  modelFile,
  REQUEST_TIMEOUT_MS,
  server,
  SIMPLE_ID,
  socketioStillServes,
  startFuzzTarget,
  startLikeFuzzTarget,
  stopFuzzTarget,
  voiceStillServes,
} from 'test/fuzz/fuzz-target';
import {
  GRAPHQL_OPERATIONS,
  graphqlCaseFor,
  type GraphqlOperation,
} from 'test/fuzz/graphql-arbitraries';
import { FUZZ_SEED, KeepAliveClient, sleep } from 'test/fuzz/harness';
import {
  oddId,
  type PathId,
  type RestCase,
  restCaseFor,
  type Route,
  routeName,
  ROUTES,
} from 'test/fuzz/rest-arbitraries';

/**
 * The long fuzz run (`npm run test:fuzz`, a CI step of its own): at least FUZZ_LONG_CASES
 * (default 10,000) generated cases for every REST route and every GraphQL operation against one `parley run` process, then no 5xx,
 * no crash, every error in the failure body (the invariants of test/fuzz, same checks), and the
 * server's RSS within 50 MB of its baseline after a warm-up. Cases go over a few kept-alive
 * connections, one batch at a time: one case of every route (or operation) per fast-check run.
 * Both RSS readings follow a full garbage collection in the server (through its inspector): the
 * RSS of a busy server mostly shows how much garbage V8 has let pile up since it last collected
 * (some 230 MB of it here), which hides a leak of 50 MB or fakes one.
 */

// 10,000 per route (about 390,000 cases) takes some 15 minutes on a quiet 2-core machine.
const CASES_PER_ROUTE = Number(process.env.FUZZ_LONG_CASES ?? 10_000);
/** Parallel kept-alive connections (a few: the machine has 2 cores shared with the server). */
const CONNECTIONS = 4;
const RSS_GROWTH_LIMIT = 50 * 1024 * 1024;
/**
 * Warm-up batches before the RSS baseline: every code path loaded, and caches and pools filled
 * to their bounds, so what grows after is what the server keeps and should not.
 */
const WARM_UP_BATCHES = 1000;

/** Completed cases per route / operation, and the time they took (for the profile line). */
const counted = new Map<string, { cases: number; ms: number }>();
let rssBaseline = 0;
/** V8's heap in use right after the baseline's collection. */
let liveBaseline = 0;
let connections: KeepAliveClient;
let started = 0;

function count(name: string, ms: number): void {
  const entry = counted.get(name) ?? { cases: 0, ms: 0 };
  entry.cases++;
  entry.ms += ms;
  counted.set(name, entry);
}

const restIds: fc.Arbitrary<PathId> = fc.oneof(
  { weight: 12, arbitrary: SIMPLE_ID },
  { weight: 6, arbitrary: oddId },
  {
    weight: 1,
    arbitrary: fc
      .record({
        n: fc.integer({ min: 256, max: 20_000 }),
        c: fc.constantFrom('a', '%C3%A9', '%00'),
      })
      .map<PathId>(({ n, c }) => ({ unit: c, times: n })),
  },
);

/** DELETE /model unloads the model: its batch runs apart, so every other route has a model. */
const unloads = (r: Route): boolean => r.path === '/model' && r.method === 'DELETE';
const LOADED_ROUTES = ROUTES.filter((r) => !unloads(r));
const UNLOAD_ROUTES = ROUTES.filter(unloads);

function restBatch(routes: readonly Route[]): fc.Arbitrary<RestCase[]> {
  return fc.tuple(...routes.map((r) => restCaseFor(r, restIds, 'mostly-small')));
}

async function runRest(batch: readonly RestCase[], counting: boolean): Promise<void> {
  if (counting && batchesRun++ % 500 === 0) rssTrend.push(mb(server.rss()));
  await Promise.all(
    batch.map((c) => checkRest(c, connections, (ms) => counting && count(routeName(c.route), ms))),
  );
}

const graphqlBatch = fc.tuple(...GRAPHQL_OPERATIONS.map((op) => graphqlCaseFor(op)));

async function runGraphql(
  batch: ReadonlyArray<Parameters<typeof checkGraphql>[0]>,
  counting: boolean,
): Promise<void> {
  await Promise.all(
    batch.map((c, i) =>
      checkGraphql(
        c,
        connections,
        (ms) => counting && count(`GraphQL ${GRAPHQL_OPERATIONS[i]}`, ms),
      ),
    ),
  );
}

/** Loads the trained model again (PUT /model), as an operator would after DELETE /model. */
async function reloadModel(): Promise<void> {
  const res = await fetch(`${server.base}/model?token=${AUTH_TOKEN}`, {
    method: 'PUT',
    body: JSON.stringify({ model_file: modelFile }),
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
  expect(res.status).toBe(204);
}

const mb = (bytes: number): string => `${(bytes / 2 ** 20).toFixed(1)} MB`;

/** A full garbage collection in the server, a second to return pages, then its RSS and heap. */
async function collectedMemory(): Promise<{ rss: number; heapUsed: number }> {
  const { heapUsed } = await server.collectGarbage();
  await sleep(1000);
  return { rss: server.rss(), heapUsed };
}

/**
 * The server's V8 heap in use and its external memory (Buffers) from its /metrics, to tell
 * live objects from allocator slack.
 */
async function heapUsed(): Promise<string> {
  const text = await (await fetch(`${server.base}/metrics`)).text();
  const read = (name: string): number =>
    Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? NaN);
  const space = (kind: string, name: string): string =>
    mb(
      Number(
        new RegExp(`^nodejs_heap_space_size_${kind}_bytes\\{space="${name}"\\} (\\S+)$`, 'm').exec(
          text,
        )?.[1] ?? NaN,
      ),
    );
  return (
    `heap ${mb(read('nodejs_heap_size_used_bytes'))} of ${mb(read('nodejs_heap_size_total_bytes'))} ` +
    `(new ${space('used', 'new')} of ${space('total', 'new')}, old ${space('used', 'old')} of ${space('total', 'old')}, ` +
    `large ${space('total', 'large_object')}, code ${space('total', 'code')}) external ${mb(read('nodejs_external_memory_bytes'))}`
  );
}
let heapBaseline = '';
/** RSS every 500 batches of the REST run: a step that levels off, or a steady climb. */
const rssTrend: string[] = [];
let batchesRun = 0;
/** RSS after each phase: growth that levels off, or grows with every phase. */
const rssByPhase: string[] = [];

beforeAll(async () => {
  await startFuzzTarget('error', { inspect: true });
  connections = new KeepAliveClient(server.port, CONNECTIONS, REQUEST_TIMEOUT_MS);
  // Warm-up: every route and operation a thousand times (another seed, not counted), the
  // model loaded again, the other clients once; then the baseline.
  const warmUp = { seed: FUZZ_SEED + 1, numRuns: WARM_UP_BATCHES };
  for (const batch of fc.sample(restBatch(ROUTES), warmUp)) await runRest(batch, false);
  for (const batch of fc.sample(graphqlBatch, warmUp)) await runGraphql(batch, false);
  await reloadModel();
  await socketioStillServes();
  await voiceStillServes();
  heapBaseline = await heapUsed();
  ({ rss: rssBaseline, heapUsed: liveBaseline } = await collectedMemory());
  started = performance.now();
}, 600_000);

afterEach(() => {
  if (server?.exited() === null) rssByPhase.push(mb(server.rss()));
});

afterAll(async () => {
  connections?.close();
  await stopFuzzTarget();
});

describe(`fuzz, long run: ${CASES_PER_ROUTE} cases per REST route and GraphQL operation`, () => {
  it('fuzzes every route Nest maps at start (none missing from the route list)', async () => {
    const probe = await startLikeFuzzTarget('debug');
    let mapped: string[];
    try {
      mapped = [...probe.output().matchAll(/Mapped \{([^,}]+), (\w+)\} route/g)].map(
        ([, path, method]) => `${method} ${path}`,
      );
    } finally {
      await probe.stop();
    }
    // Nest's `*conversationId`, `:name` and `:file` are the `{id}`, `{name}` and `{file}` of the list; GraphQL's
    // route is fuzzed by operation below.
    const listed = ROUTES.map(
      (r) =>
        `${r.method} ${r.path
          .replace('{id}', '*conversationId')
          .replace('{name}', ':name')
          .replace('{file}', ':file')
          .replace(/(.)\/$/, '$1')}`,
    );
    const fuzzedElsewhere = ['POST /api/graphql'];
    expect(mapped.length).toBeGreaterThan(20);
    expect(mapped.filter((r) => !listed.includes(r) && !fuzzedElsewhere.includes(r))).toEqual([]);
    expect(listed.filter((r) => !mapped.includes(r))).toEqual([]);
  }, 120_000);

  it('REST: every route with a loaded model answers without 5xx, with failure bodies', async () => {
    await holds(restBatch(LOADED_ROUTES), (batch) => runRest(batch, true), {
      exactly: CASES_PER_ROUTE,
    });
  }, 1_800_000);

  it('REST: DELETE /model (the model unloaded) answers without 5xx, with failure bodies', async () => {
    await holds(restBatch(UNLOAD_ROUTES), (batch) => runRest(batch, true), {
      exactly: CASES_PER_ROUTE,
    });
    await reloadModel();
  }, 1_800_000);

  it('GraphQL: every operation answers with coded errors, never INTERNAL_SERVER_ERROR', async () => {
    await holds(graphqlBatch, (batch) => runGraphql(batch, true), { exactly: CASES_PER_ROUTE });
  }, 1_800_000);

  it(`reached ${CASES_PER_ROUTE} cases everywhere; the server runs and its RSS grew < 50 MB`, async () => {
    const seconds = (performance.now() - started) / 1000;
    expect(server.exited()).toBeNull();
    expect((await fetch(`${server.base}/health/ready`)).status).toBe(200);
    await socketioStillServes();
    await voiceStillServes();
    // A leak check, not a timing check: RSS after a full collection, as the baseline was.
    const heapAfter = await heapUsed();
    const { rss: rssAfter, heapUsed: liveAfter } = await collectedMemory();
    const names = [
      ...ROUTES.map(routeName),
      ...GRAPHQL_OPERATIONS.map((op: GraphqlOperation) => `GraphQL ${op}`),
    ];
    const cases = names.map((n) => counted.get(n)?.cases ?? 0);
    const total = cases.reduce((a, b) => a + b, 0);
    const costliest = [...counted.entries()]
      .sort((a, b) => b[1].ms - a[1].ms)
      .slice(0, 5)
      .map(([n, e]) => `${n} ${(e.ms / 1000).toFixed(0)} s`)
      .join(', ');
    process.stderr.write(
      `fuzz long run: ${total} cases in ${seconds.toFixed(0)} s over ${connections.connections} connections ` +
        `(seed ${FUZZ_SEED}); ${ROUTES.length} REST routes and ${GRAPHQL_OPERATIONS.length} GraphQL ` +
        `operations, ${Math.min(...cases)}–${Math.max(...cases)} cases each; server RSS ` +
        `after a full collection: baseline ${mb(rssBaseline)}, after ${mb(rssAfter)} (${rssAfter >= rssBaseline ? '+' : ''}${mb(rssAfter - rssBaseline)}; after each test ${rssByPhase.join(', ')}), ` +
        `REST run every 500 batches ${rssTrend.join(', ')}; before the collections ${heapBaseline} → ${heapAfter}; ` +
        `live heap after the collections ${mb(liveBaseline)} → ${mb(liveAfter)}; ` +
        `server time by route, largest: ${costliest}\n` +
        names.map((n, i) => `  ${cases[i]}\t${n}`).join('\n') +
        '\n',
    );
    expect(names.filter((_, i) => (cases[i] ?? 0) < CASES_PER_ROUTE)).toEqual([]);
    expect(rssAfter - rssBaseline).toBeLessThan(RSS_GROWTH_LIMIT);
  }, 120_000);
});
