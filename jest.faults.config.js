'use strict';
// The fault suite (test/faults/README.md): real processes, real PostgreSQL / Redis / RabbitMQ,
// kill -9, database restarts, network partitions. Run by `npm run test:faults` and by .ci/run
// after the test command; not part of `npm test` (it needs root for network namespaces and
// takes minutes).
const base = require('./jest.config.js');
const common = base.projects[0];

module.exports = {
  globalSetup: base.globalSetup,
  globalTeardown: base.globalTeardown,
  testTimeout: 300000,
  reporters: base.reporters,
  projects: [
    {
      rootDir: common.rootDir,
      transform: common.transform,
      moduleNameMapper: common.moduleNameMapper,
      testEnvironment: 'node',
      displayName: 'faults',
      testMatch: ['<rootDir>/test/faults/**/*.fault-spec.ts'],
    },
  ],
};
