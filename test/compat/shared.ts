import { join, resolve } from 'node:path';

/**
 * Rasa's example bots, datasets and reference documents: PARLEY_SHARED, or `shared/` beside the
 * repository (test/compat/run.js checks that it exists before running the suite).
 */
export const SHARED = resolve(
  process.env.PARLEY_SHARED ?? join(__dirname, '..', '..', '..', 'shared'),
);
/** Rasa's example bots. */
export const RASA_BOTS = join(SHARED, 'bots');
