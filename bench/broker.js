'use strict';
/* global fetch -- Node global missing from the repo's eslint JS globals */
// Event-broker benchmark: what the transactional outbox and the RabbitMQ relay cost a turn, and
// how fast the relay drains a backlog.
//
//   npm run build && node bench/broker.js [--conversations 50] [--turns 20] [--rounds 2]
//                                         [--backlog 20000]
//
// 1. trains the test mood bot (`parley train`, test/fixtures/moodbot/config.full.yml);
// 2. (a) REST turn throughput: `parley run` without an event broker ("off") and with
//    `event_broker: type: pika` on the local RabbitMQ ("on"), alternately, --rounds times each,
//    in the same run; every round: --conversations conversations at once, each --turns turns
//    ("hi" / "great") one after the other through the REST webhook; each reply is checked. The
//    "on" server's consumer checks afterwards that every event of those turns arrived.
// 3. (b) relay drain rate: a server whose broker is unreachable takes --backlog events through
//    `POST /conversations/<id>/tracker/events` (50 events a request: all of them wait in the
//    outbox); it stops, a server with the real RabbitMQ starts, and a consumer times the span
//    from the first to the last message of the backlog (target ≥ 2,000 events/s).
// Database: DATABASE_URL's server (a fresh `parley_bench_<ts>` database, dropped afterwards), or
// a throwaway embedded PostgreSQL. RabbitMQ: AMQP_URL (default amqp://guest:guest@127.0.0.1:5672),
// unique exchange and queue names, deleted afterwards.
const { chmodSync, mkdtempSync, rmSync, writeFileSync } = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const amqp = require('amqplib');
const {
  check,
  cleanupStack,
  loadAverage,
  machine,
  round,
  startDatabase,
} = require('./lib/http-bench');
const {
  freePort,
  moodbotFiles,
  parseNumberArgs,
  sleep,
  startParley,
  trainParley,
  writeResults,
} = require('./lib/parley');

const AMQP_URL = process.env.AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672';
const TURNS = [
  ['hi', 'Hi there! How is your day going?'],
  ['great', 'Glad to hear it. Keep it up!'],
];

/** A queue bound to a fresh fanout exchange, counting (and parsing) what arrives. */
async function consumer(tag) {
  const exchange = `parley-bench-${tag}-${Date.now().toString(36)}`;
  const queue = `${exchange}-q`;
  const conn = await amqp.connect(AMQP_URL);
  const ch = await conn.createChannel();
  await ch.assertExchange(exchange, 'fanout', { durable: false });
  await ch.assertQueue(queue, { durable: true });
  await ch.bindQueue(queue, exchange, '');
  const state = { count: 0, first: 0n, last: 0n, senders: new Map() };
  await ch.prefetch(2000);
  await ch.consume(queue, (m) => {
    if (m === null) return;
    const now = process.hrtime.bigint();
    if (state.count === 0) state.first = now;
    state.last = now;
    state.count++;
    const body = JSON.parse(m.content.toString());
    state.senders.set(body.sender_id, (state.senders.get(body.sender_id) ?? 0) + 1);
    ch.ack(m);
  });
  return {
    exchange,
    queue,
    state,
    async waitFor(n, timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      while (state.count < n) {
        check(Date.now() < deadline, `${tag}: ${state.count} of ${n} messages arrived`);
        await sleep(20);
      }
    },
    async close() {
      await ch.deleteQueue(queue).catch(() => undefined);
      await ch.deleteExchange(exchange).catch(() => undefined);
      await conn.close().catch(() => undefined);
    },
  };
}

function endpointsFile(dir, name, url, c) {
  const file = path.join(dir, name);
  writeFileSync(
    file,
    `event_broker:\n  type: pika\n  url: ${url}\n  exchange_name: ${c.exchange}\n  queues:\n    - ${c.queue}\n`,
  );
  return file;
}

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

async function restTurns(url, label, conversations, turns) {
  const latencies = [];
  let retries = 0;
  const senders = Array.from({ length: conversations }, (_, c) => `${label}-${c}-${Date.now()}`);
  const started = process.hrtime.bigint();
  await Promise.all(
    senders.map(async (sender) => {
      for (let i = 0; i < turns; i++) {
        const [text, expected] = TURNS[i % TURNS.length];
        const t0 = process.hrtime.bigint();
        const send = () =>
          fetch(`${url}/webhooks/rest/webhook`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ sender, message: text }),
          });
        // A keep-alive socket the server closed as it was reused: sent again once, counted.
        const res = await send().catch((error) => {
          if (error?.cause?.code !== 'UND_ERR_SOCKET') throw error;
          retries++;
          return send();
        });
        const reply = (await res.json())[0]?.text;
        latencies.push(Number(process.hrtime.bigint() - t0) / 1e6);
        check(reply === expected, `${label}: "${text}" answered ${JSON.stringify(reply)}`);
      }
    }),
  );
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  latencies.sort((a, b) => a - b);
  return {
    senders,
    turnsPerSec: round(latencies.length / seconds, 1),
    p50Ms: round(percentile(latencies, 50)),
    p99Ms: round(percentile(latencies, 99)),
    retries,
  };
}

async function main() {
  const opts = parseNumberArgs(process.argv.slice(2), {
    conversations: 50,
    turns: 20,
    rounds: 2,
    backlog: 20_000,
  });
  const cleanup = cleanupStack();
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'parley-bench-broker-'));
  chmodSync(tmp, 0o755);
  cleanup.push(async () => rmSync(tmp, { recursive: true, force: true }));
  try {
    loadAverage({ warn: true });
    const models = path.join(tmp, 'models');
    await trainParley({ ...moodbotFiles(), out: models });
    const db = await startDatabase();
    cleanup.push(() => db.stop());
    const env = { DATABASE_URL: db.url, DATABASE_POOL_SIZE: '20' };

    // (a) turn throughput, broker off vs on
    const live = await consumer('turns');
    cleanup.push(() => live.close());
    const onFile = endpointsFile(tmp, 'on.yml', AMQP_URL, live);
    const throughput = [];
    for (let round_ = 0; round_ <= opts.rounds; round_++) {
      for (const mode of ['off', 'on']) {
        const server = await startParley(models, {
          ...env,
          ...(mode === 'on' ? { PARLEY_ENDPOINTS: onFile } : {}),
        });
        try {
          const warmup = round_ === 0;
          const r = await restTurns(
            server.url,
            `${mode}${round_}`,
            warmup ? 10 : opts.conversations,
            warmup ? 4 : opts.turns,
          );
          if (!warmup) {
            const { senders: _senders, ...figures } = r;
            throughput.push({ mode, round: round_, ...figures });
          }
          if (mode === 'on') {
            // every event of these turns reaches the consumer (checked, not timed)
            const expected = r.senders.length;
            const deadline = Date.now() + 30_000;
            while (r.senders.some((s) => !live.state.senders.has(s))) {
              check(Date.now() < deadline, 'events of the "on" turns did not all arrive');
              await sleep(50);
            }
            check(expected > 0, 'no conversations');
          }
        } finally {
          await server.close();
        }
      }
    }
    const mean = (mode) => {
      const rows = throughput.filter((t) => t.mode === mode);
      return rows.reduce((s, t) => s + t.turnsPerSec, 0) / rows.length;
    };
    const ratio = round(mean('on') / mean('off'), 3);

    // (b) drain rate of a backlog
    const drain = await consumer('drain');
    cleanup.push(() => drain.close());
    const deadPort = await freePort();
    const downFile = endpointsFile(
      tmp,
      'down.yml',
      `amqp://guest:guest@127.0.0.1:${deadPort}`,
      drain,
    );
    const upFile = endpointsFile(tmp, 'up.yml', AMQP_URL, drain);
    const perRequest = 50;
    const requests = Math.ceil(opts.backlog / perRequest);
    const down = await startParley(models, { ...env, PARLEY_ENDPOINTS: downFile });
    try {
      const ids = Array.from({ length: 200 }, (_, i) => `drain-${i}-${Date.now()}`);
      let next = 0;
      await Promise.all(
        Array.from({ length: 10 }, async () => {
          while (next < requests) {
            const i = next++;
            const events = Array.from({ length: perRequest }, (_, k) => ({
              event: 'slot',
              timestamp: 1_700_000_000 + i + k / 100,
              name: 'mood',
              value: `v${k}`,
            }));
            const res = await fetch(
              `${down.url}/conversations/${ids[i % ids.length]}/tracker/events?include_events=NONE`,
              {
                method: 'POST',
                headers: { 'content-type': 'application/json' },
                body: JSON.stringify(events),
              },
            );
            check(res.status === 200, `append → ${res.status}`);
          }
        }),
      );
    } finally {
      await down.close();
    }
    check(
      drain.state.count === 0,
      'the "down" server published although its broker was unreachable',
    );
    const total = requests * perRequest;
    const up = await startParley(models, { ...env, PARLEY_ENDPOINTS: upFile });
    let drainRate;
    try {
      await drain.waitFor(total, 300_000);
      const seconds = Number(drain.state.last - drain.state.first) / 1e9;
      drainRate = round(total / seconds, 0);
    } finally {
      await up.close();
    }

    const report = {
      machine: machine(),
      database: db.kind,
      load: loadAverage(),
      options: opts,
      turnThroughput: throughput,
      onOffRatio: ratio,
      drain: { events: total, eventsPerSec: drainRate, target: 2000 },
    };
    writeResults(path.join(__dirname, 'results', 'broker.json'), report);
    console.table(throughput);
    console.log(
      `turn throughput with outbox + pika on / off: ${ratio} (target ≥ 0.9); ` +
        `drain: ${total} events at ${drainRate} events/s (target ≥ 2,000) → ${
          ratio >= 0.9 && drainRate >= 2000 ? 'PASS' : 'FAIL'
        }`,
    );
  } finally {
    await cleanup.run();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
