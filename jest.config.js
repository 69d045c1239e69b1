'use strict';
// One jest run, four projects: pure unit specs beside the code, integration specs
// against a real PostgreSQL, e2e specs through the same configureApp() as main.ts, and a fuzz
// suite against a spawned server.
const fs = require('node:fs');
const swc = JSON.parse(fs.readFileSync(`${__dirname}/.swcrc`, 'utf8'));
delete swc.$schema;
const transform = { '^.+\\.ts$': ['@swc/jest', { ...swc, swcrc: false }] };
const moduleNameMapper = {
  '^src/(.*)$': '<rootDir>/src/$1',
  '^test/(.*)$': '<rootDir>/test/$1',
};
const common = { rootDir: __dirname, transform, moduleNameMapper, testEnvironment: 'node' };

module.exports = {
  globalSetup: '<rootDir>/test/setup/global-setup.js',
  globalTeardown: '<rootDir>/test/setup/global-teardown.js',
  testTimeout: 30000,
  // The files run one at a time (`--maxWorkers=1`: they share ports, the database and the
  // machine's two cores) in one worker process, replaced once its memory passes this limit
  // after a file. Jest keeps part of every file's modules alive; run in band, the heap grew past
  // 2 GB by the last e2e files, and garbage collection on it made them several times slower.
  workerIdleMemoryLimit: '1GB',
  reporters: ['default', '<rootDir>/test/setup/summary-reporter.js'],
  projects: [
    { ...common, displayName: 'unit', testMatch: ['<rootDir>/src/**/*.spec.ts'] },
    {
      ...common,
      displayName: 'int',
      testMatch: ['<rootDir>/test/integration/**/*.int-spec.ts'],
    },
    { ...common, displayName: 'e2e', testMatch: ['<rootDir>/test/e2e/**/*.e2e-spec.ts'] },
    // Property-based fuzzing of a spawned server (test/fuzz/README.md).
    { ...common, displayName: 'fuzz', testMatch: ['<rootDir>/test/fuzz/**/*.fuzz-spec.ts'] },
  ],
};
