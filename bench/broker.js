'use strict';
/* global fetch, setTimeout, clearTimeout -- Node globals missing from the repo's eslint JS globals */
// Event-broker benchmark: what the transactional outbox and the RabbitMQ relay cost a turn, and
// how fast the relay drains a backlog.
//
//   npm run build && node bench/broker.js [--conversations 50] [--turns 40] [--rounds 3]
//                                         [--backlog 20000]
//
// 1. trains the test mood bot (`parley train`, test/fixtures/moodbot/config.full.yml);
// 2. (a) REST turn throughput of four `parley run` set-ups, alternately, --rounds times each, in
//    the same run, each server warmed up by 200 turns before it is measured: "off" (no event
//    broker, the default lock store); "on" (`event_broker: type: pika` on the local RabbitMQ,
//    so the outbox and its relay work);
//    "down" (the same broker at an address where nothing listens: the outbox fills, the relay
//    backs off); "redis+on" (the scale-out set-up: `lock_store: type: concurrent_redis` on
//    REDIS_URL or 127.0.0.1:6379 plus the pika broker). Every round: --conversations
//    conversations at once, each --turns turns ("hi" / "great") one after the other through the
//    REST webhook; each reply is checked. The consumer checks afterwards that every event of
//    the "on" and "redis+on" turns arrived. Targets: redis+on ≥ 0.8× off (one instance with
//    Redis locks and the outbox on); down ≥ 0.9× on (a broker outage does not slow turns).
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
const { fork } = require('node:child_process');
const {
  check,
  cleanupStack,
  loadAverage,
  machine,
  processCpuMs,
  round,
  startDatabase,
} = require('./lib/http-bench');
const {
  freePort,
  moodbotFiles,
  parseNumberArgs,
  redisLockLines,
  redisUrl,
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

/**
 * A queue bound to a fresh fanout exchange, consumed by its own process (lib/amqp-consumer.js):
 * `snapshot()` gives what arrived so far.
 */
async function consumer(tag) {
  const child = fork(path.join(__dirname, 'lib', 'amqp-consumer.js'), [AMQP_URL, tag], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const next = () =>
    new Promise((resolve, reject) => {
      const onExit = (code) => reject(new Error(`${tag} consumer exited (${code})`));
      child.once('exit', onExit);
      child.once('message', (m) => {
        child.off('exit', onExit);
        resolve(m);
      });
    });
  const { exchange, queue } = await next();
  const snapshot = async () => {
    const answer = next();
    child.send('state');
    const s = await answer;
    return { ...s, first: BigInt(s.first), last: BigInt(s.last), senders: new Map(s.senders) };
  };
  return {
    exchange,
    queue,
    snapshot,
    async waitFor(n, timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      for (let s = await snapshot(); s.count < n; s = await snapshot()) {
        check(Date.now() < deadline, `${tag}: ${s.count} of ${n} messages arrived`);
        await sleep(20);
      }
    },
    async close() {
      if (child.exitCode === null && child.connected) child.send('close');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** Mean turns per relay pass so far, from the server's `parley_outbox_relay_batch_turns`. */
async function turnsPerPass(url) {
  const text = await (await fetch(`${url}/metrics`)).text();
  const value = (name) => Number(text.match(new RegExp(`^${name} (\\S+)$`, 'm'))?.[1] ?? NaN);
  return round(
    value('parley_outbox_relay_batch_turns_sum') / value('parley_outbox_relay_batch_turns_count'),
    1,
  );
}

function endpointsFile(dir, name, url, c, extra = '') {
  const file = path.join(dir, name);
  writeFileSync(
    file,
    `event_broker:\n  type: pika\n  url: ${url}\n  exchange_name: ${c.exchange}\n  queues:\n    - ${c.queue}\n${extra}`,
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
    turns: 40,
    rounds: 3,
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
    const deadBroker = `amqp://guest:guest@127.0.0.1:${await freePort()}`;
    const endpointsOf = {
      off: null,
      on: endpointsFile(tmp, 'on.yml', AMQP_URL, live),
      down: endpointsFile(tmp, 'down-turns.yml', deadBroker, live),
      'redis+on': endpointsFile(tmp, 'redis-on.yml', AMQP_URL, live, redisLockLines()),
    };
    const redisPassword = decodeURIComponent(redisUrl().password);
    const throughput = [];
    for (let round_ = 1; round_ <= opts.rounds; round_++) {
      for (const mode of Object.keys(endpointsOf)) {
        const server = await startParley(models, {
          ...env,
          ...(endpointsOf[mode] ? { PARLEY_ENDPOINTS: endpointsOf[mode] } : {}),
          ...(mode === 'redis+on' ? { BENCH_REDIS_PASSWORD: redisPassword } : {}),
        });
        try {
          // Every server is new: its code is warmed up by 200 turns before the measured ones.
          const warm = await restTurns(server.url, `${mode}${round_}w`, 10, 20);
          const cpu0 = processCpuMs(server.pid);
          const r = await restTurns(server.url, `${mode}${round_}`, opts.conversations, opts.turns);
          if (mode === 'on' || mode === 'redis+on') {
            // every event of these turns reaches the consumer (checked; timed only as the
            // server's CPU, which includes publishing them)
            const deadline = Date.now() + 30_000;
            const all = [...warm.senders, ...r.senders];
            for (let s = await live.snapshot(); all.some((x) => !s.senders.has(x));) {
              check(Date.now() < deadline, 'events of the "on" turns did not all arrive');
              await sleep(20);
              s = await live.snapshot();
            }
          }
          const cpu1 = processCpuMs(server.pid);
          const perPass =
            mode === 'on' || mode === 'redis+on' ? await turnsPerPass(server.url) : null;
          const { senders: _senders, ...figures } = r;
          const turns = opts.conversations * opts.turns;
          const cpuUsPerTurn =
            cpu0 === null || cpu1 === null ? null : round(((cpu1 - cpu0) * 1000) / turns, 1);
          throughput.push({ mode, round: round_, ...figures, cpuUsPerTurn, turnsPerPass: perPass });
        } finally {
          await server.close();
        }
      }
    }
    const mean = (mode) => {
      const rows = throughput.filter((t) => t.mode === mode);
      return rows.reduce((s, t) => s + t.turnsPerSec, 0) / rows.length;
    };
    const cpu = (mode) => {
      const rows = throughput.filter((t) => t.mode === mode && t.cpuUsPerTurn !== null);
      return rows.length === 0
        ? NaN
        : round(rows.reduce((s, t) => s + t.cpuUsPerTurn, 0) / rows.length, 1);
    };
    const cpuPerTurn = Object.fromEntries(Object.keys(endpointsOf).map((m) => [m, cpu(m)]));
    const ratio = round(mean('on') / mean('off'), 3);
    const downRatio = round(mean('down') / mean('on'), 3);
    const scaleOutRatio = round(mean('redis+on') / mean('off'), 3);

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
      (await drain.snapshot()).count === 0,
      'the "down" server published although its broker was unreachable',
    );
    const total = requests * perRequest;
    const up = await startParley(models, { ...env, PARLEY_ENDPOINTS: upFile });
    let drainRate;
    try {
      await drain.waitFor(total, 300_000);
      const arrived = await drain.snapshot();
      const seconds = Number(arrived.last - arrived.first) / 1e9;
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
      downOnRatio: downRatio,
      redisOnOffRatio: scaleOutRatio,
      serverCpuUsPerTurn: cpuPerTurn,
      drain: { events: total, eventsPerSec: drainRate, target: 2000 },
    };
    writeResults(path.join(__dirname, 'results', 'broker.json'), report);
    console.table(throughput);
    const pass = scaleOutRatio >= 0.8 && downRatio >= 0.9 && drainRate >= 2000;
    console.log(
      `turn throughput: outbox + pika on / off ${ratio}; broker down / on ${downRatio} (target ≥ 0.9); ` +
        `Redis lock + outbox + pika / off ${scaleOutRatio} (target ≥ 0.8); ` +
        `drain: ${total} events at ${drainRate} events/s (target ≥ 2,000) → ${pass ? 'PASS' : 'FAIL'}`,
    );
    console.log(
      `server CPU per turn (µs, mean): ${Object.entries(cpuPerTurn)
        .map(([m, us]) => `${m} ${us}`)
        .join(', ')}`,
    );
  } finally {
    await cleanup.run();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
