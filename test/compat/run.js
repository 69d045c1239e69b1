#!/usr/bin/env node
'use strict';
// `npm run test:compat`: runs the compatibility suite (test/compat/jest.config.js) when Rasa's
// bots and documents are at hand (PARLEY_SHARED, or `shared/` beside the repository); without
// them it says so on one line and exits 0. Extra arguments go to jest.
const { spawnSync } = require('node:child_process');
const { existsSync } = require('node:fs');
const { join, resolve } = require('node:path');
const { sharedDir } = require('./shared-dir');

const root = resolve(__dirname, '..', '..');
const shared = sharedDir();
if (!existsSync(shared)) {
  console.log(
    `${process.env.PARLEY_SHARED ? shared : '../shared'} not found: compat suite skipped`,
  );
  process.exit(0);
}
const jest = join(root, 'node_modules', 'jest', 'bin', 'jest.js');
const args = [
  jest,
  '--config',
  join(__dirname, 'jest.config.js'),
  '--runInBand',
  ...process.argv.slice(2),
];
const run = spawnSync(process.execPath, args, { cwd: root, stdio: 'inherit' });
process.exit(run.status ?? 1);
