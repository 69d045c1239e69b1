import { DialogueError } from 'src/core/errors/dialogue-error';
import {
  type EntityAnnotation,
  type NluExample,
  type NluTrainingData,
} from 'src/core/training-data/nlu-training-data';

/** A Braun et al. 2017 corpus split by its `training` flag. */
export interface BraunCorpus {
  readonly name: string;
  readonly train: NluTrainingData;
  readonly test: NluTrainingData;
  /** Entities whose text could not be found in their sentence (dropped). */
  readonly unlocatedEntities: number;
}

function invalid(file: string, problem: string): never {
  throw new DialogueError('TRAINING_DATA.INVALID', `${file}: ${problem}`, { file, problem });
}

/** Token index of each character under the authors' tokenizer (words and single punctuation). */
function tokenIndexAt(text: string, charIndex: number): number {
  let count = 0;
  for (const m of text.matchAll(/[\p{L}\p{N}_]+|[^\p{L}\p{N}_\s]/gu)) {
    if (m.index >= charIndex) break;
    count += 1;
  }
  return count;
}

function locate(text: string, surface: string, tokenStart: number): number {
  const candidates: number[] = [];
  const find = (haystack: string, needle: string): void => {
    let i = haystack.indexOf(needle);
    while (i >= 0) {
      candidates.push(i);
      i = haystack.indexOf(needle, i + 1);
    }
  };
  find(text, surface);
  if (candidates.length === 0) find(text.toLowerCase(), surface.toLowerCase());
  let best = -1;
  let bestDistance = Infinity;
  for (const c of candidates) {
    const d = Math.abs(tokenIndexAt(text, c) - tokenStart);
    if (d < bestDistance) {
      best = c;
      bestDistance = d;
    }
  }
  return best;
}

function record(value: unknown, file: string, what: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    invalid(file, `${what} must be an object`);
  }
  return value as Record<string, unknown>;
}

/** Reads one corpus JSON (`{name, sentences: [{text, intent, entities, training}]}`). */
export function readBraunCorpus(json: string, file: string): BraunCorpus {
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch (error) {
    invalid(file, `invalid JSON: ${(error as Error).message}`);
  }
  const root = record(parsed, file, 'the corpus');
  const sentences = root['sentences'];
  if (!Array.isArray(sentences)) invalid(file, "'sentences' must be a list");
  const train: NluExample[] = [];
  const test: NluExample[] = [];
  let unlocated = 0;
  sentences.forEach((raw: unknown, i: number) => {
    const s = record(raw, file, `sentence ${i}`);
    const text = s['text'];
    const intent = s['intent'];
    if (typeof text !== 'string' || typeof intent !== 'string') {
      invalid(file, `sentence ${i} needs string 'text' and 'intent'`);
    }
    const entities: EntityAnnotation[] = [];
    const rawEntities = Array.isArray(s['entities']) ? (s['entities'] as unknown[]) : [];
    for (const re of rawEntities) {
      const e = record(re, file, `an entity of sentence ${i}`);
      const surface = e['text'];
      const type = e['entity'];
      const tokenStart = typeof e['start'] === 'number' ? e['start'] : 0;
      if (typeof surface !== 'string' || typeof type !== 'string') {
        invalid(file, `an entity of sentence ${i} needs string 'text' and 'entity'`);
      }
      const start = locate(text, surface, tokenStart);
      if (start < 0) {
        unlocated += 1;
        continue;
      }
      const end = start + surface.length;
      entities.push({ entity: type, start, end, value: text.slice(start, end) });
    }
    entities.sort((a, b) => a.start - b.start);
    const example: NluExample = { text, intent, entities };
    if (s['training'] === true) train.push(example);
    else test.push(example);
  });
  const wrap = (examples: NluExample[]): NluTrainingData => ({
    examples,
    synonyms: {},
    regexFeatures: [],
    lookupTables: [],
    responses: {},
  });
  const name = typeof root['name'] === 'string' ? root['name'] : file;
  return { name, train: wrap(train), test: wrap(test), unlocatedEntities: unlocated };
}
