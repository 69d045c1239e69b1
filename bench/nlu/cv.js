'use strict';
// Cross-validation launcher (model selection on the training split only); see cv.ts.
// Usage: node bench/nlu/cv.js '<JSON list of variants>'   (env CV_K, CV_REPEATS, CV_NO_TSC=1)
const os = require('node:os');
const path = require('node:path');
const { launch } = require('./launch');

launch({
  entry: 'cv',
  out: process.env.PARLEY_BENCH_OUT || path.join(os.tmpdir(), 'parley-bench-nlu-cv'),
  compile: !process.env.CV_NO_TSC,
});
