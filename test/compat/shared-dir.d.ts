/** The folder with Rasa's example bots, datasets and reference documents (see shared-dir.js). */
export function sharedDir(): string;
