'use strict';
/* global fetch -- Node globals missing from the repo's eslint JS globals */
// Model store benchmark: load time and peak memory of a model archive, and swap latency over HTTP.
//
//   npm run build && node bench/models.js [--swaps 10] [--skip-synthetic]
//
// 1. trains two moodbot NLU archives (`parley train`) and, unless --skip-synthetic, one archive of
//    the synthetic 15,000-utterance / 150-intent corpus of bench/nlu (same generator, seed 7);
// 2. load: each archive is read, verified and loaded (loadModelArchive, as PUT /model does) in a
//    fresh child process, three times; figures are the median wall time and the peak RSS of the
//    process (getrusage maxRSS) minus its RSS before loading;
// 3. swap: `parley run --enable-api` (LOG_LEVEL=silent); PUT /model alternates between the archives
//    --swaps times while one client sends POST /model/parse back to back; reports PUT latency and
//    parse latency during the swaps, and checks that every request answered 2xx.
// Database: DATABASE_URL's server (a fresh `parley_bench_<ts>` database, dropped afterwards), or
// the embedded PostgreSQL `parley run` starts itself. Results: console and bench/results/models.json.
const { execFileSync, fork } = require('node:child_process');
const { chmodSync, mkdirSync, mkdtempSync, rmSync, statSync } = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const {
  check,
  cleanupStack,
  createScratchDatabase,
  loadAverage,
  machine,
  round,
} = require('./lib/http-bench');

const { ROOT, moodbotFiles, startParley, trainParley, writeResults } = require('./lib/parley');

const DIST = path.join(ROOT, 'dist');
const RESULTS = path.join(__dirname, 'results', 'models.json');
const LOAD_RUNS = 3;
const MB = 1024 * 1024;

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

function percentile(values, q) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)];
}

// ---------------------------------------------------------------------------------------------
// Child modes (run in a fresh process each)

/** Loads one archive and reports time and memory. */
async function childLoad(archive) {
  const { loadModelArchive } = require(
    path.join(DIST, 'modules', 'model', 'sources', 'model-loader.js'),
  );
  const rssBefore = process.memoryUsage().rss;
  const started = process.hrtime.bigint();
  const assistant = await loadModelArchive(archive);
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  const peakRss = process.resourceUsage().maxRSS * 1024;
  return {
    ms,
    rssBefore,
    peakRss,
    rssAfter: process.memoryUsage().rss,
    intents: assistant.domain.intents?.length ?? null,
    components: assistant.nlu?.componentNames ?? [],
  };
}

/** Trains the synthetic corpus of bench/nlu into `outDir`. */
async function childTrainSynthetic(outDir) {
  const benchOut = path.join(DIST, 'bench-nlu');
  require('tsconfig-paths').register({ baseUrl: benchOut, paths: { 'src/*': ['src/*'] } });
  const { syntheticCorpus } = require(path.join(benchOut, 'bench', 'nlu', 'nlu-bench.js'));
  const { Domain } = require(path.join(DIST, 'core'));
  const { readConfigYaml } = require(path.join(DIST, 'core', 'training-data'));
  const { trainNluModel } = require(
    path.join(DIST, 'modules', 'model', 'training', 'train-nlu-model.js'),
  );
  const data = syntheticCorpus();
  const intents = [...new Set(data.examples.map((e) => e.intent))];
  const domainText = `version: "3.1"\nintents:\n${intents.map((i) => `  - ${i}`).join('\n')}\nentities:\n  - city\n`;
  const configText = 'recipe: default.v1\nlanguage: en\n';
  const started = Date.now();
  const result = await trainNluModel(
    {
      data,
      config: readConfigYaml(configText, 'config.yml'),
      configText,
      domain: Domain.fromYaml(domainText, 'domain.yml'),
      domainText,
      outDir,
      fixedModelName: 'synthetic-15k',
      force: true,
    },
    () => undefined,
  );
  return {
    path: result.path,
    examples: data.examples.length,
    trainMs: Date.now() - started,
  };
}

function runChild(mode, arg) {
  return new Promise((resolve, reject) => {
    const child = fork(path.join(__dirname, 'models.js'), ['--child', mode, arg], {
      stdio: 'inherit',
    });
    let message = null;
    child.once('message', (m) => (message = m));
    child.once('error', reject);
    child.once('exit', (code) =>
      code === 0 && message !== null
        ? resolve(message)
        : reject(new Error(`child ${mode} exited with ${code}`)),
    );
  });
}

// ---------------------------------------------------------------------------------------------
// Preparation

async function trainMoodbot(outDir, name) {
  const { archive } = await trainParley({
    ...moodbotFiles('config.yml'),
    out: outDir,
    args: ['--fixed-model-name', name, '--force'],
    env: { LOG_LEVEL: 'silent' },
  });
  return path.resolve(ROOT, archive);
}

function compileBenchNlu() {
  execFileSync(
    process.execPath,
    [
      require.resolve('typescript/bin/tsc'),
      '-p',
      path.join(__dirname, 'nlu', 'tsconfig.json'),
      '--outDir',
      path.join(DIST, 'bench-nlu'),
    ],
    { stdio: 'inherit', cwd: ROOT },
  );
}

async function timed(fn) {
  const started = process.hrtime.bigint();
  const result = await fn();
  return { ms: Number(process.hrtime.bigint() - started) / 1e6, result };
}

async function measureSwaps(url, archives, swaps) {
  let swapping = true;
  const parseMs = [];
  const failures = [];
  const talker = (async () => {
    let i = 0;
    while (swapping) {
      const { ms, result } = await timed(() =>
        fetch(`${url}/model/parse`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify({ text: `I am feeling great today ${i++}` }),
        }),
      );
      await result.arrayBuffer();
      if (result.status !== 200) failures.push(`parse ${result.status}`);
      parseMs.push(ms);
    }
  })();
  const putMs = [];
  for (let i = 0; i < swaps; i++) {
    const archive = archives[(i + 1) % archives.length];
    const { ms, result } = await timed(() =>
      fetch(`${url}/model`, {
        method: 'PUT',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ model_file: archive }),
      }),
    );
    await result.arrayBuffer();
    if (result.status !== 204) failures.push(`PUT ${result.status}`);
    putMs.push(ms);
  }
  swapping = false;
  await talker;
  check(failures.length === 0, `every request 2xx during swaps (${failures.join(', ')})`);
  return {
    swaps,
    putMs: { p50: round(median(putMs)), max: round(Math.max(...putMs)) },
    parseDuringSwaps: {
      requests: parseMs.length,
      p50: round(median(parseMs)),
      p99: round(percentile(parseMs, 0.99)),
      max: round(Math.max(...parseMs)),
    },
  };
}

// ---------------------------------------------------------------------------------------------

async function main(argv) {
  const swaps = Number(argv[argv.indexOf('--swaps') + 1]) || 10;
  const skipSynthetic = argv.includes('--skip-synthetic');
  const cleanup = cleanupStack();
  const load = loadAverage({ warn: true });
  const work = mkdtempSync(path.join(os.tmpdir(), 'parley-bench-models-'));
  // The embedded PostgreSQL drops root privileges: its data dir must be reachable.
  chmodSync(work, 0o755);
  cleanup.push(async () => rmSync(work, { recursive: true, force: true }));
  const results = { machine: machine(), loadAverage: load, swaps };
  try {
    console.log('training the moodbot twice…');
    const mood = [await trainMoodbot(work, 'mood-a'), await trainMoodbot(work, 'mood-b')];
    const models = [{ name: 'moodbot', path: mood[0] }];
    if (!skipSynthetic) {
      console.log('compiling bench/nlu and training the synthetic 15k corpus (~30 s)…');
      compileBenchNlu();
      const syn = await runChild('train-synthetic', work);
      console.log(`  ${syn.examples} utterances trained in ${round(syn.trainMs / 1000)} s`);
      models.push({ name: `synthetic ${syn.examples} utterances`, path: syn.path });
      results.syntheticTrainMs = syn.trainMs;
    }

    results.load = {};
    for (const model of models) {
      const runs = [];
      for (let i = 0; i < LOAD_RUNS; i++) runs.push(await runChild('load', model.path));
      const bytes = statSync(model.path).size;
      results.load[model.name] = {
        archiveMB: round(bytes / MB),
        loadMsMedian: round(median(runs.map((r) => r.ms))),
        loadMsRuns: runs.map((r) => round(r.ms)),
        peakRssMB: round(Math.max(...runs.map((r) => r.peakRss)) / MB),
        peakAboveBaselineMB: round(Math.max(...runs.map((r) => r.peakRss - r.rssBefore)) / MB),
        rssAfterMB: round(median(runs.map((r) => r.rssAfter)) / MB),
      };
    }

    let databaseUrl = null;
    let env = { PARLEY_DATA_DIR: path.join(work, '.parley') };
    mkdirSync(env.PARLEY_DATA_DIR, { recursive: true });
    if (process.env.DATABASE_URL) {
      const db = await createScratchDatabase(process.env.DATABASE_URL);
      cleanup.push(() => db.stop());
      databaseUrl = db.kind;
      env = { DATABASE_URL: db.url };
    }
    results.database = databaseUrl ?? 'embedded PostgreSQL';
    const server = await startParley(mood[0], env);
    cleanup.push(() => server.close());
    console.log('swapping…');
    results.swapMoodbot = await measureSwaps(server.url, mood, swaps);
    if (!skipSynthetic) {
      results.swapSynthetic = await measureSwaps(server.url, [mood[0], models[1].path], 4);
    }
  } finally {
    await cleanup.run();
  }

  console.log('\nModel load (fresh process, median of 3):');
  for (const [name, r] of Object.entries(results.load)) {
    console.log(
      `  ${name.padEnd(32)} archive ${r.archiveMB} MB  load ${r.loadMsMedian} ms  ` +
        `peak RSS ${r.peakRssMB} MB (+${r.peakAboveBaselineMB} MB over the process before loading)`,
    );
  }
  const show = (label, s) =>
    console.log(
      `  ${label.padEnd(32)} PUT /model p50 ${s.putMs.p50} ms, max ${s.putMs.max} ms; ` +
        `parse during swaps: ${s.parseDuringSwaps.requests} requests, p50 ${s.parseDuringSwaps.p50} ms, ` +
        `p99 ${s.parseDuringSwaps.p99} ms, max ${s.parseDuringSwaps.max} ms; all 2xx`,
    );
  console.log(`\nSwap over HTTP (${results.database}):`);
  show(`moodbot ↔ moodbot ×${swaps}`, results.swapMoodbot);
  if (results.swapSynthetic) show('moodbot ↔ synthetic ×4', results.swapSynthetic);
  writeResults(RESULTS, results);
  console.log(`\nload average ${load.join(' ')}; results in bench/results/models.json`);
}

if (process.argv[2] === '--child') {
  const [, , , mode, arg] = process.argv;
  const run = mode === 'load' ? childLoad(arg) : childTrainSynthetic(arg);
  run.then(
    (message) => process.send(message, () => process.exit(0)),
    (error) => {
      console.error(error);
      process.exit(1);
    },
  );
} else {
  main(process.argv.slice(2)).catch((error) => {
    console.error(error);
    process.exitCode = 1;
  });
}
