'use strict';
// NLU benchmark launcher: compiles only the NLU folders (the rest of the project may be mid-edit)
// into dist/bench-nlu with tsc, maps the `src/...` alias, then runs bench/nlu/nlu-bench.ts.
// Usage: node bench/nlu/run.js [--quick] [--skip-nlpjs] [--skip-synthetic]
// PARLEY_BENCH_OUT=<dir> compiles elsewhere (e.g. while another process rebuilds dist/).
const { execFileSync } = require('node:child_process');
const path = require('node:path');

const root = path.resolve(__dirname, '..', '..');
const out = process.env.PARLEY_BENCH_OUT || path.join(root, 'dist', 'bench-nlu');
execFileSync(
  process.execPath,
  [
    require.resolve('typescript/bin/tsc'),
    '-p',
    path.join(__dirname, 'tsconfig.json'),
    '--outDir',
    out,
  ],
  {
    stdio: 'inherit',
    cwd: root,
  },
);
process.env.PARLEY_ROOT = process.env.PARLEY_ROOT || root;
// An output dir outside the project still resolves the project's node_modules.
process.env.NODE_PATH = [path.join(root, 'node_modules'), process.env.NODE_PATH]
  .filter(Boolean)
  .join(path.delimiter);
require('node:module').Module._initPaths();
require('tsconfig-paths').register({ baseUrl: out, paths: { 'src/*': ['src/*'] } });
require(path.join(out, 'bench', 'nlu', 'nlu-bench.js'))
  .main(process.argv.slice(2))
  .catch((error) => {
    console.error(error);
    process.exitCode = 1;
  });
