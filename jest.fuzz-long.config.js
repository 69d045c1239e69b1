'use strict';
// The long fuzz run (test/fuzz/README.md, "Long run"): FUZZ_LONG_CASES (default 10,000) cases
// for every REST route and every GraphQL operation of one `parley run`. Run by
// `npm run test:fuzz` and by .ci/run after the fault suite; not part of `npm test` (it takes
// many minutes on 2 cores).
const base = require('./jest.config.js');
const common = base.projects[0];

module.exports = {
  globalSetup: base.globalSetup,
  globalTeardown: base.globalTeardown,
  testTimeout: 3_600_000,
  reporters: base.reporters,
  projects: [
    {
      rootDir: common.rootDir,
      transform: common.transform,
      moduleNameMapper: common.moduleNameMapper,
      testEnvironment: 'node',
      displayName: 'fuzz-long',
      testMatch: ['<rootDir>/test/fuzz/**/*.long-fuzz-spec.ts'],
    },
  ],
};
