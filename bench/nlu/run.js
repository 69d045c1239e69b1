'use strict';
// NLU benchmark: compiles the NLU folders into dist/bench-nlu, then runs bench/nlu/nlu-bench.ts.
// Usage: node bench/nlu/run.js [--quick] [--skip-nlpjs] [--skip-synthetic] [--orders 5] [--calibration]
// --orders N: per corpus, intent F1 over N file orders of the training examples and N seeds.
// --calibration: only the calibration and out-of-domain report (ECE, fallback cost, OOD recall).
// PARLEY_BENCH_OUT=<dir> compiles elsewhere (e.g. while another process rebuilds dist/).
const path = require('node:path');
const { launch, root } = require('./launch');

launch({
  entry: 'nlu-bench',
  out: process.env.PARLEY_BENCH_OUT || path.join(root, 'dist', 'bench-nlu'),
});
