/**
 * NLU training data in memory: what Rasa's `TrainingData` holds after reading nlu.yml files.
 * Offsets are UTF-16 indices into `text` (JavaScript strings); convert at the I/O boundary.
 */

/** An entity annotation of a training example (`[text](entity)` or `[text]{...}`). */
export interface EntityAnnotation {
  readonly entity: string;
  readonly start: number;
  readonly end: number;
  readonly value: string;
  readonly role?: string;
  readonly group?: string;
}

/** One training example. `intent` is the full name (`faq/ask_x` for retrieval intents). */
export interface NluExample {
  readonly text: string;
  readonly intent: string;
  readonly entities: readonly EntityAnnotation[];
  readonly metadata?: Readonly<Record<string, unknown>>;
}

export interface RegexFeature {
  readonly name: string;
  readonly pattern: string;
}

export interface LookupTable {
  readonly name: string;
  readonly elements: readonly string[];
}

/** A response variation as written under `responses:` (only `text` matters to NLU). */
export type ResponseVariation = Readonly<Record<string, unknown>>;

export interface NluTrainingData {
  readonly examples: readonly NluExample[];
  /** surface form → canonical value, in file order (later entries win). */
  readonly synonyms: Readonly<Record<string, string>>;
  readonly regexFeatures: readonly RegexFeature[];
  readonly lookupTables: readonly LookupTable[];
  /** `utter_faq/ask_x` → variations (responses found in NLU files). */
  readonly responses: Readonly<Record<string, readonly ResponseVariation[]>>;
}

/** The symbol separating a retrieval intent from its response key (`faq/ask_x`). */
export const RESPONSE_KEY_SEPARATOR = '/';

/** `faq/ask_x` → `faq`; plain intents unchanged. */
export function baseIntent(intent: string): string {
  const i = intent.indexOf(RESPONSE_KEY_SEPARATOR);
  return i < 0 ? intent : intent.slice(0, i);
}

/** True when the intent is a full retrieval intent (`faq/ask_x`). */
export function isRetrievalIntent(intent: string): boolean {
  return intent.includes(RESPONSE_KEY_SEPARATOR);
}

export function emptyNluTrainingData(): NluTrainingData {
  return { examples: [], synonyms: {}, regexFeatures: [], lookupTables: [], responses: {} };
}

/** Merges several files' data: examples concatenated, synonyms/responses overlaid, lookups merged by name. */
export function mergeNluTrainingData(parts: readonly NluTrainingData[]): NluTrainingData {
  const examples: NluExample[] = [];
  const synonyms: Record<string, string> = {};
  const regexFeatures: RegexFeature[] = [];
  const lookups = new Map<string, string[]>();
  const responses: Record<string, readonly ResponseVariation[]> = {};
  for (const part of parts) {
    examples.push(...part.examples);
    Object.assign(synonyms, part.synonyms);
    regexFeatures.push(...part.regexFeatures);
    for (const table of part.lookupTables) {
      const existing = lookups.get(table.name);
      if (existing) existing.push(...table.elements);
      else lookups.set(table.name, [...table.elements]);
    }
    Object.assign(responses, part.responses);
  }
  return {
    examples,
    synonyms,
    regexFeatures,
    lookupTables: [...lookups].map(([name, elements]) => ({ name, elements })),
    responses,
  };
}
