'use strict';
// NLU benchmark: compiles the NLU folders into dist/bench-nlu, then runs bench/nlu/nlu-bench.ts.
// Usage: node bench/nlu/run.js [--quick] [--skip-nlpjs] [--skip-synthetic] [--orders 5] [--oos]
// --orders N: per corpus, intent F1 over N file orders of the training examples and N seeds.
// --oos (alias --calibration): only the out-of-scope report: each corpus trained alone with the
//   others' utterances out of scope, then the synthetic 150-intent set with an `oos` intent
//   (--skip-synthetic leaves it out); in-scope accuracy with and without the fallback, ECE,
//   out-of-scope and gibberish recall, how often `oos` ranks first.
// PARLEY_BENCH_OUT=<dir> compiles elsewhere (e.g. while another process rebuilds dist/).
const path = require('node:path');
const { launch, root } = require('./launch');

launch({
  entry: 'nlu-bench',
  out: process.env.PARLEY_BENCH_OUT || path.join(root, 'dist', 'bench-nlu'),
});
