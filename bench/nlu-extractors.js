'use strict';
// Parse cost of the built-in pretrained extractors (DucklingEntityExtractor without a url, the
// SpacyEntityExtractor substitute), on ordinary and on hostile messages.
//
//   npm run build && node bench/nlu-extractors.js [--runs 20]
//
// Trains a pipeline of WhitespaceTokenizer, KeywordIntentClassifier and the extractor(s) in
// process from the compiled build (dist/), then times TrainedNlu.parse: the first parse after
// training, ordinary messages (mean of --runs parses, best of 3 rounds) and hostile ones (one
// parse each: digits, number words, currency amounts, times and units as dense as a window reads
// them whole; 600 and 10,000 characters; wall and CPU time). Results:
// console table and bench/results/nlu-extractors.json.
const { mkdirSync, writeFileSync } = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const ROOT = path.join(__dirname, '..');
const { trainNlu } = require(path.join(ROOT, 'dist', 'core', 'nlu', 'pipeline.js'));

const args = process.argv.slice(2);
const runsAt = args.indexOf('--runs');
const RUNS = runsAt >= 0 ? Number(args[runsAt + 1]) : 20;

const data = {
  examples: [
    { text: 'hello', intent: 'greet', entities: [] },
    { text: 'I want 3 pizzas', intent: 'order', entities: [] },
  ],
  synonyms: {},
  regexFeatures: [],
  lookupTables: [],
  responses: {},
};

const PIPELINES = {
  duckling: [{ name: 'DucklingEntityExtractor' }],
  spacy: [{ name: 'SpacyEntityExtractor' }],
  both: [{ name: 'DucklingEntityExtractor' }, { name: 'SpacyEntityExtractor' }],
};

const ORDINARY = [
  ['hello', 'hello'],
  ['order', 'I want 3 pizzas for $20, delivered to John Smith in Berlin'],
  ['reminder', 'remind me tomorrow at 5pm to call mom'],
];

const HOSTILE = [
  ['600 chars of digits', '1 '.repeat(300)],
  ['600 chars of number words', 'one two three four five '.repeat(30).slice(0, 600)],
  ['600 chars of amounts', '$1 '.repeat(200)],
  ['600 chars, 6 numbers per window', 'tomorrow at 5pm I pay $20 for 2 km, ok? '.repeat(15)],
  ['10,000 chars of digits', '1 '.repeat(5000)],
  ['10,000 chars, no spaces', '1'.repeat(10000)],
  ['10,000 chars of prose', 'I want 3 pizzas tomorrow at 5pm and John wants 12 more. '.repeat(180)],
];

const ms = (start) => Number(process.hrtime.bigint() - start) / 1e6;
/** CPU time of this process since `start` (user + system, ms): less distorted by load than wall time. */
const cpu = (start) => {
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000;
};

async function main() {
  const rows = [];
  const load = os.loadavg().map((l) => Math.round(l * 100) / 100);
  if (load[0] > os.cpus().length / 2) {
    console.warn(`warning: load average ${load[0]} on ${os.cpus().length} CPUs: figures are noisy`);
  }
  for (const [name, extractors] of Object.entries(PIPELINES)) {
    const pipeline = [
      { name: 'WhitespaceTokenizer' },
      { name: 'KeywordIntentClassifier' },
      ...extractors,
    ];
    const trainStart = process.hrtime.bigint();
    const nlu = await trainNlu(data, { language: 'en', pipeline });
    rows.push({ pipeline: name, message: '(training, recognizers built)', ms: ms(trainStart) });
    let start = process.hrtime.bigint();
    nlu.parse(ORDINARY[1][1]);
    rows.push({ pipeline: name, message: 'first parse', ms: ms(start) });
    for (const [label, text] of ORDINARY) {
      let best = Infinity;
      for (let round = 0; round < 3; round++) {
        start = process.hrtime.bigint();
        for (let i = 0; i < RUNS; i++) nlu.parse(text);
        best = Math.min(best, ms(start) / RUNS);
      }
      rows.push({ pipeline: name, message: `${label} (mean of ${RUNS})`, ms: best });
    }
    for (const [label, text] of HOSTILE) {
      start = process.hrtime.bigint();
      const cpuStart = process.cpuUsage();
      nlu.parse(text);
      rows.push({ pipeline: name, message: label, ms: ms(start), cpuMs: cpu(cpuStart) });
    }
  }
  for (const r of rows) {
    r.ms = Math.round(r.ms * 100) / 100;
    if (r.cpuMs !== undefined) r.cpuMs = Math.round(r.cpuMs * 100) / 100;
  }
  console.table(rows);
  console.log(`load average (1/5/15 min): ${load.join(' ')} on ${os.cpus().length} CPUs`);
  const out = path.join(__dirname, 'results', 'nlu-extractors.json');
  mkdirSync(path.dirname(out), { recursive: true });
  writeFileSync(out, `${JSON.stringify({ at: new Date().toISOString(), load, rows }, null, 2)}\n`);
  console.log(`written ${path.relative(ROOT, out)}`);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
