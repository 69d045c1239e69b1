'use strict';
/* global __filename -- a Node global missing from the repo's eslint JS globals */
// Instructions per dialogue turn: a cost figure that does not move with the machine's speed.
//
//   npm run build && node bench/turn-instructions.js [--turns 600] [--warmup 12000] [--flows 1]
//
// `--flows 1` counts the same six messages to the mood bot written as flows (Rasa Pro CALM:
// NLUCommandAdapter + FlowPolicy, bench/fixtures/moodbot-flows, as `bench/dialogue.js --flows 1`):
// parse, commands, stack, FlowPolicy, one append per turn.
//
// The CPU time of a turn on a shared 2-core machine varies by ±15 % from run to run, too much
// to see a change of a few per cent. This bench counts instructions instead, with valgrind's
// callgrind (Debian package `valgrind`): it boots the app in one process (the same
// createParleyApp as `parley run`, on DATABASE_URL's server or an embedded PostgreSQL), trains
// and loads the moodbot, runs `--warmup` turns with the counting off (so the JIT settles), then
// counts `--turns` turns of six-message moodbot conversations through MessageHandler (parse,
// predict, actions, one append per turn; no HTTP), one turn at a time. With fewer than ~10,000
// warm-up turns TurboFan is still compiling during the count (20 % of it after 3,000). Two runs
// of the same build agree within 0.2 %. The count covers every thread of the process (GC
// helpers included) but not PostgreSQL; the main thread's count is given apart, as it does not
// depend on whether a major collection's concurrent marking falls in the counted window (for
// the flows mood bot, whose cached sessions are larger, the helpers' share varies by 2x). Results: console (with the symbols that cost most) and
// bench/results/turn-instructions.json. About a minute.
const { execFileSync, spawnSync } = require('node:child_process');
const { chmodSync, mkdtempSync, readdirSync, rmSync } = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { machine, startDatabase } = require('./lib/http-bench');
const { moodbotFiles, parseNumberArgs, trainParley, writeResults } = require('./lib/parley');

const RESULTS = path.join(__dirname, 'results', 'turn-instructions.json');
const RESULTS_FLOWS = path.join(__dirname, 'results', 'turn-instructions-flows.json');
const FLOWS_BOT = path.join(__dirname, 'fixtures', 'moodbot-flows');
const DIST = path.join(__dirname, '..', 'dist');
const MESSAGES = ['hello there', 'I am very sad', 'yes it did', 'hi', 'wonderful', 'bye'];
const INNER = 'PARLEY_TURN_INSTRUCTIONS_INNER';

/** Inside valgrind: boot, warm up uncounted, count `turns` turns, exit. */
async function inner() {
  const { turns, warmup } = JSON.parse(process.env[INNER]);
  require('reflect-metadata');
  const { createParleyApp } = require(path.join(DIST, 'bootstrap', 'create-app'));
  const { validateEnv } = require(path.join(DIST, 'platform', 'config', 'validate-env'));
  const core = require(path.join(DIST, 'core'));
  const config = validateEnv({
    LOG_LEVEL: 'silent',
    DATABASE_URL: process.env.DATABASE_URL,
    PARLEY_MODEL: process.env.PARLEY_MODEL,
  });
  const app = await createParleyApp(config, process.env.DATABASE_URL);
  await app.init();
  const handler = app.get(core.MessageHandler);
  let conversation = 0;
  const conversations = async (n) => {
    for (let done = 0; done < n; conversation++) {
      for (const text of MESSAGES) {
        const output = new core.CollectingOutputChannel();
        await handler.handleMessage({
          text,
          senderId: `turns-${conversation}`,
          inputChannel: 'rest',
          output,
          metadata: null,
        });
        if (output.messages.length === 0) throw new Error(`no answer to "${text}"`);
        done++;
      }
    }
  };
  await conversations(warmup);
  execFileSync('callgrind_control', ['--instr=on', String(process.pid)], { stdio: 'ignore' });
  await conversations(turns);
  execFileSync('callgrind_control', ['--instr=off', String(process.pid)], { stdio: 'ignore' });
  await app.close();
}

/** Instruction totals of a callgrind output file, split by a few parts of V8. */
function summarize(file) {
  const out = execFileSync('callgrind_annotate', ['--inclusive=no', '--threshold=100', file], {
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
  });
  const parts = { total: 0, gc: 0, compiler: 0, jsonStringify: 0, top: [] };
  for (const line of out.split('\n')) {
    const m = /^\s*([\d,]+)\s+\([\s\d.]+%\)\s+(.*)$/.exec(line);
    if (!m) continue;
    const n = Number(m[1].replace(/,/g, ''));
    const what = m[2];
    if (!what.includes('PROGRAM TOTALS') && parts.top.length < 12) {
      parts.top.push({ symbol: what.replace(/^\?\?\?:/, '').replace(/ \[.*\]$/, ''), n });
    }
    if (what.includes('PROGRAM TOTALS')) parts.total = n;
    else if (
      /Scaveng|MarkCompact|Sweeper|Marking|heap::base|Heap::|SizeFromMap|MemoryChunk/.test(what)
    ) {
      parts.gc += n;
    } else if (/v8::internal::compiler::|v8::internal::maglev::/.test(what)) parts.compiler += n;
    else if (/JsonStringifier/.test(what)) parts.jsonStringify += n;
  }
  return parts;
}

async function main() {
  if (process.env[INNER]) return inner();
  const bench = parseNumberArgs(process.argv.slice(2), { turns: 600, warmup: 12000, flows: 0 });
  const valgrind = spawnSync('valgrind', ['--version'], { encoding: 'utf8' });
  if (valgrind.status !== 0) {
    throw new Error('valgrind is missing: install the Debian package "valgrind"');
  }
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'parley-bench-turns-'));
  chmodSync(tmp, 0o755); // the embedded PostgreSQL drops root privileges
  const db = await startDatabase();
  try {
    const files = bench.flows
      ? {
          data: [path.join(FLOWS_BOT, 'data')],
          domain: path.join(FLOWS_BOT, 'domain.yml'),
          config: path.join(FLOWS_BOT, 'config.yml'),
        }
      : moodbotFiles();
    const model = await trainParley({ ...files, out: path.join(tmp, 'models') });
    const started = Date.now();
    const run = spawnSync(
      'valgrind',
      [
        '--tool=callgrind',
        '--instr-atstart=no',
        '--smc-check=all-non-file', // V8 writes code at run time
        // One count per thread: the main thread's is steady from run to run, while the GC's
        // and the JIT's helper threads vary with when a major collection falls in the window.
        '--separate-threads=yes',
        `--callgrind-out-file=${path.join(tmp, 'callgrind.out')}`,
        process.execPath,
        __filename,
      ],
      {
        env: {
          ...process.env,
          DATABASE_URL: db.url,
          PARLEY_MODEL: model.dir,
          [INNER]: JSON.stringify(bench),
        },
        stdio: ['ignore', 'inherit', 'pipe'],
        encoding: 'utf8',
      },
    );
    if (run.status !== 0) {
      throw new Error(`the counted run failed (${run.status}):\n${run.stderr.slice(-2000)}`);
    }
    // One file per thread (callgrind.out-01 is the main thread); the bare name stays empty.
    const outputs = readdirSync(tmp).filter((f) => /^callgrind\.out-\d+$/.test(f));
    const mainFile = outputs.find((f) => f.endsWith('-01'));
    if (!mainFile) throw new Error('callgrind wrote no output file for the main thread');
    const main = summarize(path.join(tmp, mainFile));
    const parts = { total: 0, gc: 0, compiler: 0, jsonStringify: 0, top: main.top };
    for (const f of outputs) {
      const p = f === mainFile ? main : summarize(path.join(tmp, f));
      for (const k of ['total', 'gc', 'compiler', 'jsonStringify']) parts[k] += p[k];
    }
    const per = (n) => Math.round(n / bench.turns);
    const result = {
      instructionsPerTurn: per(parts.total),
      mainThreadPerTurn: per(main.total),
      mainThreadGcPerTurn: per(main.gc),
      gcPerTurn: per(parts.gc),
      compilerPerTurn: per(parts.compiler),
      jsonStringifyPerTurn: per(parts.jsonStringify),
      topPerTurn: parts.top.map((t) => ({ symbol: t.symbol, instructions: per(t.n) })),
      wallS: Math.round((Date.now() - started) / 100) / 10,
    };
    console.log(
      `${bench.turns} ${bench.flows ? 'flows ' : ''}moodbot turns after ${bench.warmup} uncounted: ${result.instructionsPerTurn.toLocaleString('en')} instructions per turn ` +
        `(GC ${result.gcPerTurn.toLocaleString('en')}, JIT compiler ${result.compilerPerTurn.toLocaleString('en')}, JSON.stringify ${result.jsonStringifyPerTurn.toLocaleString('en')}); ` +
        `main thread ${result.mainThreadPerTurn.toLocaleString('en')} (GC ${result.mainThreadGcPerTurn.toLocaleString('en')}); ${result.wallS} s under valgrind`,
    );
    console.log('main thread, costliest symbols:');
    for (const t of result.topPerTurn) {
      console.log(`  ${String(t.instructions).padStart(8)}  ${t.symbol.slice(0, 110)}`);
    }
    writeResults(bench.flows ? RESULTS_FLOWS : RESULTS, {
      date: new Date().toISOString(),
      ...machine(),
      database: db.kind,
      options: bench,
      result,
    });
  } finally {
    await db.stop();
    rmSync(tmp, { recursive: true, force: true });
  }
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
