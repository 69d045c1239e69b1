#!/usr/bin/env node
'use strict';
// `parley run` runs under Node flags tuned for a server (see dist/cli/node-flags.js). Node reads
// them only when it starts: without them the server is started once more with them, and this
// process only passes signals on and exits as the server does.
const { existsSync, readFileSync } = require('node:fs');
const { parseEnv } = require('node:util');
const { launchPlan, relaunch } = require('../dist/cli/node-flags.js');

const args = process.argv.slice(2);
// PARLEY_NODE_FLAGS may come from .env, as every other setting (the environment wins).
let dotEnv = {};
try {
  if (existsSync('.env')) dotEnv = parseEnv(readFileSync('.env', 'utf8'));
} catch {
  // the CLI reports an unreadable .env itself
}
const plan = launchPlan(args, { ...dotEnv, ...process.env }, process.execArgv);
if (plan.kind === 'invalid') {
  process.stderr.write(`error: ${plan.message}\n`);
  process.exitCode = 2;
} else if (plan.kind === 'relaunch') {
  relaunch(plan.flags, __filename, args);
} else {
  require('../dist/cli/main.js');
}
