'use strict';
const { resolve } = require('node:path');

/**
 * The folder with Rasa's example bots (bots/), datasets and reference documents (reference/):
 * PARLEY_SHARED, or `shared/` beside the repository.
 */
function sharedDir() {
  return resolve(process.env.PARLEY_SHARED ?? resolve(__dirname, '..', '..', '..', 'shared'));
}

module.exports = { sharedDir };
