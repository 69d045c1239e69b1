'use strict';
// Cross-validation launcher (model selection on the training split only); see cv.ts.
// Usage: node bench/nlu/cv.js '<JSON list of variants>'   (env CV_K, CV_REPEATS, CV_NO_TSC=1)
const { execFileSync } = require('node:child_process');
const path = require('node:path');

const root = path.resolve(__dirname, '..', '..');
const out =
  process.env.PARLEY_BENCH_OUT || path.join(require('node:os').tmpdir(), 'parley-bench-nlu-cv');
if (!process.env.CV_NO_TSC) {
  execFileSync(
    process.execPath,
    [
      require.resolve('typescript/bin/tsc'),
      '-p',
      path.join(__dirname, 'tsconfig.json'),
      '--outDir',
      out,
    ],
    { stdio: 'inherit', cwd: root },
  );
}
// An output dir outside the project still resolves the project's node_modules.
process.env.NODE_PATH = [path.join(root, 'node_modules'), process.env.NODE_PATH]
  .filter(Boolean)
  .join(path.delimiter);
require('node:module').Module._initPaths();
require('tsconfig-paths').register({ baseUrl: out, paths: { 'src/*': ['src/*'] } });
require(path.join(out, 'bench', 'nlu', 'cv.js'))
  .main(process.argv.slice(2))
  .catch((error) => {
    console.error(error);
    process.exitCode = 1;
  });
