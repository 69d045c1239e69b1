'use strict';
// The compat suite (test/compat/README.md): live conversations with Rasa's example bots, which
// it reads from the `shared` folder beside the repository. Without that folder there is nothing
// to test: say so in one line and exit 0 before jest looks for tests or creates a database.
const fs = require('node:fs');
const { join } = require('node:path');

const repoRoot = join(__dirname, '..', '..');
if (!fs.existsSync(join(repoRoot, '..', 'shared'))) {
  console.log(
    "../shared not found: compat suite skipped (it needs Rasa's example bots beside the repository)",
  );
  process.exit(0);
}

// Same transform and module paths as the root jest.config.js.
const swc = JSON.parse(fs.readFileSync(join(repoRoot, '.swcrc'), 'utf8'));
delete swc.$schema;

module.exports = {
  rootDir: repoRoot,
  transform: { '^.+\\.ts$': ['@swc/jest', { ...swc, swcrc: false }] },
  moduleNameMapper: { '^src/(.*)$': '<rootDir>/src/$1', '^test/(.*)$': '<rootDir>/test/$1' },
  testEnvironment: 'node',
  testMatch: ['<rootDir>/test/compat/**/*.compat-spec.ts'],
  // A fresh PostgreSQL database for the run, as in the root config.
  globalSetup: '<rootDir>/test/setup/global-setup.js',
  globalTeardown: '<rootDir>/test/setup/global-teardown.js',
  // Each spec trains its bot (with capped epochs) in beforeAll: allow for it.
  testTimeout: 60000,
};
