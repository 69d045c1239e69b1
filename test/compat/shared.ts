import { join } from 'node:path';
import { sharedDir } from './shared-dir';

/**
 * Rasa's example bots, datasets and reference documents: PARLEY_SHARED, or `shared/` beside the
 * repository (test/compat/run.js checks that it exists before running the suite).
 */
export const SHARED = sharedDir();
/** Rasa's example bots. */
export const RASA_BOTS = join(SHARED, 'bots');
