'use strict';
// NLU benchmark launcher: compiles only the NLU folders (the rest of the project may be mid-edit)
// into dist/bench-nlu with tsc, maps the `src/...` alias, then runs bench/nlu/nlu-bench.ts.
// Usage: node bench/nlu/run.js [--quick] [--skip-nlpjs] [--skip-synthetic]
const { execFileSync } = require('node:child_process');
const path = require('node:path');

const root = path.resolve(__dirname, '..', '..');
const out = path.join(root, 'dist', 'bench-nlu');
execFileSync(
  process.execPath,
  [require.resolve('typescript/bin/tsc'), '-p', path.join(__dirname, 'tsconfig.json')],
  {
    stdio: 'inherit',
    cwd: root,
  },
);
require('tsconfig-paths').register({ baseUrl: out, paths: { 'src/*': ['src/*'] } });
require(path.join(out, 'bench', 'nlu', 'nlu-bench.js'))
  .main(process.argv.slice(2))
  .catch((error) => {
    console.error(error);
    process.exitCode = 1;
  });
