'use strict';
// Shared launcher of the NLU benchmarks: compiles only the NLU folders (the rest of the project
// may be mid-edit) with tsc into `out`, maps the `src/...` alias, then runs `main(argv)` of the
// compiled bench/nlu/<entry>.js.
const { execFileSync } = require('node:child_process');
const path = require('node:path');

const root = path.resolve(__dirname, '..', '..');

/** @param {{ entry: string, out: string, compile?: boolean }} options */
function launch({ entry, out, compile = true }) {
  if (compile) {
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
  process.env.PARLEY_ROOT = process.env.PARLEY_ROOT || root;
  // An output dir outside the project still resolves the project's node_modules; `out` on the
  // path lets worker threads (which do not inherit tsconfig-paths) resolve `src/...` too.
  process.env.NODE_PATH = [path.join(root, 'node_modules'), out, process.env.NODE_PATH]
    .filter(Boolean)
    .join(path.delimiter);
  require('node:module').Module._initPaths();
  require('tsconfig-paths').register({ baseUrl: out, paths: { 'src/*': ['src/*'] } });
  require(path.join(out, 'bench', 'nlu', `${entry}.js`))
    .main(process.argv.slice(2))
    .catch((error) => {
      console.error(error);
      process.exitCode = 1;
    });
}

module.exports = { launch, root };
