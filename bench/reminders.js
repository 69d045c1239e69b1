'use strict';
// Reminder lateness: how long after its time a stored reminder fires, with two pollers (two
// "instances") on one PostgreSQL database.
//
//   npm run build && node bench/reminders.js [--reminders 300] [--spread 2000] [--poll 250]
//
// --reminders reminders are written (ahead of time) due over --spread ms; two
// PostgresReminderStore + ReminderPoller pairs with their own pools sweep every --poll ms. The
// fire callback only records the time (no dialogue turn): the figure is the scheduling
// lateness the pollers add (target: p95 ≤ 1 s). Sanity: every reminder fires exactly once.
// Database: DATABASE_URL's server (a fresh `parley_bench_<ts>` database, dropped afterwards) or a
// throwaway embedded PostgreSQL.
const { setTimeout: sleep } = require('node:timers/promises');
const { check, machine, need, round, startDatabase } = require('./lib/http-bench');
const { parseNumberArgs } = require('./lib/parley');

async function main() {
  const opts = parseNumberArgs(process.argv.slice(2), { reminders: 300, spread: 2000, poll: 250 });
  const { Pool } = require('pg');
  const { DataSource } = require('typeorm');
  const { buildTypeOrmOptions } = need('platform/database/typeorm-options.js');
  const { runMigrationsLocked } = need('platform/database/run-migrations.js');
  const { ReminderPoller } = need('core/index.js');
  const { PostgresReminderStore } = need('modules/reminders/index.js');
  const db = await startDatabase();
  const pools = [];
  const pollers = [];
  try {
    const ds = await new DataSource(buildTypeOrmOptions(db.url, 2)).initialize();
    await runMigrationsLocked(ds);
    await ds.destroy();
    const quiet = { info() {}, warn() {}, error() {} };
    const late = [];
    const fired = new Map();
    const stores = [0, 1].map(() => {
      const pool = new Pool({ connectionString: db.url, max: 8 });
      pools.push(pool);
      return new PostgresReminderStore(pool);
    });
    // Written first, due from 1 s after the last write on.
    const writes = [];
    const planned = [];
    for (let i = 0; i < opts.reminders; i++) planned.push((i * opts.spread) / opts.reminders);
    const base = Date.now() + 60_000;
    for (let i = 0; i < opts.reminders; i++) {
      writes.push(
        stores[i % 2].schedule({
          conversationId: `bench-${i}`,
          name: 'r',
          intent: 'ping',
          entities: [],
          triggerAt: base + planned[i],
          killOnUserMessage: false,
          scheduledAt: Date.now() / 1000,
          outputChannel: null,
        }),
      );
    }
    await Promise.all(writes);
    // Move them to their real times in one statement: start = now + 1 s.
    const start = Date.now() + 1000;
    await pools[0].query(
      `UPDATE reminder SET trigger_at = trigger_at - make_interval(secs => $1::float8 / 1000),
         due_at = due_at - make_interval(secs => $1::float8 / 1000)`,
      [base - start],
    );
    for (const store of stores) {
      const poller = new ReminderPoller(
        store,
        (due) => {
          const i = Number(due.conversationId.slice('bench-'.length));
          late.push(Date.now() - (start + planned[i]));
          fired.set(due.conversationId, (fired.get(due.conversationId) ?? 0) + 1);
          return Promise.resolve();
        },
        quiet,
        { sweepMs: opts.poll },
      );
      pollers.push(poller);
      poller.start();
    }
    const end = Date.now() + opts.spread + 30_000;
    while (late.length < opts.reminders && Date.now() < end) await sleep(50);
    await sleep(opts.poll * 2);
    check(fired.size === opts.reminders, `${fired.size} of ${opts.reminders} fired`);
    check(
      [...fired.values()].every((n) => n === 1),
      'a reminder fired twice',
    );
    late.sort((a, b) => a - b);
    const at = (q) => late[Math.min(late.length - 1, Math.floor(q * late.length))];
    console.table({
      lateness: {
        reminders: opts.reminders,
        'spread (ms)': opts.spread,
        'poll (ms)': opts.poll,
        'p50 (ms)': round(at(0.5)),
        'p95 (ms)': round(at(0.95)),
        'max (ms)': round(late[late.length - 1]),
      },
    });
    console.log(`${db.kind}; ${JSON.stringify(machine())}`);
  } finally {
    await Promise.all(pollers.map((p) => p.stop()));
    await Promise.all(pools.map((p) => p.end()));
    await db.stop();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
