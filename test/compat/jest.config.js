'use strict';
// The Rasa compatibility suite (`npm run test:compat`, through test/compat/run.js): specs that
// hold Parley against Rasa's own example bots and published documents, read from a `shared/`
// folder beside the repository (or PARLEY_SHARED). Not part of `npm test`.
const root = require('../../jest.config.js');

const e2e = root.projects.find((p) => p.displayName === 'e2e');

module.exports = {
  rootDir: require('node:path').resolve(__dirname, '..', '..'),
  globalSetup: root.globalSetup,
  globalTeardown: root.globalTeardown,
  // The live-bot specs train their bot (with capped epochs) in beforeAll: allow for it.
  testTimeout: 60000,
  reporters: root.reporters,
  projects: [
    {
      ...e2e,
      displayName: 'compat',
      testMatch: ['<rootDir>/test/compat/**/*.compat-spec.ts'],
    },
  ],
};
