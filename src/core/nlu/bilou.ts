import { type Token } from 'src/core/nlu/message';
import { type EntityAnnotation } from 'src/core/training-data/nlu-training-data';

export const NO_ENTITY_TAG = 'O';

export type TagAttribute = 'entity' | 'role' | 'group';

function labelOf(e: EntityAnnotation, attribute: TagAttribute): string | undefined {
  return attribute === 'entity' ? e.entity : attribute === 'role' ? e.role : e.group;
}

/**
 * Token tags for the annotations: `B-x`/`I-x`/`L-x`/`U-x` (BILOU) or plain `x`; `O` elsewhere.
 * A token belongs to an entity when their character spans overlap.
 */
export function tagsFromEntities(
  tokens: readonly Token[],
  entities: readonly EntityAnnotation[],
  attribute: TagAttribute,
  bilou: boolean,
): string[] {
  const tags = tokens.map(() => NO_ENTITY_TAG);
  for (const e of entities) {
    const label = labelOf(e, attribute);
    if (!label) continue;
    const inside: number[] = [];
    tokens.forEach((t, i) => {
      if (t.start < e.end && t.end > e.start) inside.push(i);
    });
    inside.forEach((i, n) => {
      if (!bilou) tags[i] = label;
      else if (inside.length === 1) tags[i] = `U-${label}`;
      else if (n === 0) tags[i] = `B-${label}`;
      else if (n === inside.length - 1) tags[i] = `L-${label}`;
      else tags[i] = `I-${label}`;
    });
  }
  return tags;
}

/** Splits `B-x` into ['B', 'x']; plain labels have no prefix. */
export function splitTag(tag: string): { prefix: string | null; label: string } {
  if (tag.length > 2 && tag[1] === '-' && 'BILU'.includes(tag[0] ?? '')) {
    return { prefix: tag[0] ?? null, label: tag.slice(2) };
  }
  return { prefix: null, label: tag };
}

/** All tags of an entity label set: O first, then B/I/L/U per label (or the label alone). */
export function tagSet(labels: readonly string[], bilou: boolean): string[] {
  const out = [NO_ENTITY_TAG];
  for (const l of labels) {
    if (bilou) out.push(`B-${l}`, `I-${l}`, `L-${l}`, `U-${l}`);
    else out.push(l);
  }
  return out;
}

/** Which tag transitions a well-formed tag sequence allows (constrained decoding). */
export interface TagConstraints {
  /** Per tag: the tags allowed before it. */
  readonly previous: readonly Int32Array[];
  /** Per tag: the tags allowed after it. */
  readonly next: readonly Int32Array[];
  readonly start: Uint8Array;
  readonly end: Uint8Array;
}

/**
 * BILOU well-formedness: `I-x`/`L-x` only after `B-x`/`I-x`; `O`/`B-y`/`U-y` only after
 * `O`/`L-*`/`U-*`; a sequence starts outside an entity and ends outside one. Null for plain tags.
 */
export function bilouConstraints(tags: readonly string[], bilou: boolean): TagConstraints | null {
  if (!bilou) return null;
  const parts = tags.map(splitTag);
  const K = tags.length;
  const previous: number[][] = tags.map(() => []);
  const next: number[][] = tags.map(() => []);
  const start = new Uint8Array(K);
  const end = new Uint8Array(K);
  const inside = (p: string | null): boolean => p === 'B' || p === 'I';
  for (let k = 0; k < K; k++) {
    const pk = parts[k];
    if (!pk) continue;
    start[k] = pk.prefix === 'I' || pk.prefix === 'L' ? 0 : 1;
    end[k] = inside(pk.prefix) ? 0 : 1;
    for (let j = 0; j < K; j++) {
      const pj = parts[j];
      if (!pj) continue;
      const ok =
        pk.prefix === 'I' || pk.prefix === 'L'
          ? inside(pj.prefix) && pj.label === pk.label
          : !inside(pj.prefix);
      if (ok) {
        previous[k]?.push(j);
        next[j]?.push(k);
      }
    }
  }
  return {
    previous: previous.map((a) => Int32Array.from(a)),
    next: next.map((a) => Int32Array.from(a)),
    start,
    end,
  };
}

export interface TaggedSpan {
  readonly label: string;
  readonly firstToken: number;
  readonly lastToken: number;
  readonly start: number;
  readonly end: number;
  /** Minimum tag confidence over the span's tokens. */
  readonly confidence: number;
}

/**
 * Merges token tags into spans. Tolerates inconsistent BILOU sequences (an `I`/`L` without `B`
 * opens a span; a label change closes it). With `splitByComma`, a comma between two tokens
 * closes the span (Rasa's split_entities_by_comma).
 */
export function spansFromTags(
  tokens: readonly Token[],
  tags: readonly string[],
  confidences: readonly number[],
  text: string,
  splitByComma: (label: string) => boolean,
): TaggedSpan[] {
  const spans: TaggedSpan[] = [];
  let current: { label: string; first: number; last: number; conf: number } | null = null;
  const close = (): void => {
    if (!current) return;
    const a = tokens[current.first];
    const b = tokens[current.last];
    if (a && b) {
      spans.push({
        label: current.label,
        firstToken: current.first,
        lastToken: current.last,
        start: a.start,
        end: b.end,
        confidence: current.conf,
      });
    }
    current = null;
  };
  tags.forEach((tag, i) => {
    const conf = confidences[i] ?? 1;
    if (tag === NO_ENTITY_TAG) {
      close();
      return;
    }
    const { prefix, label } = splitTag(tag);
    const prev = tokens[i - 1];
    const token = tokens[i];
    const commaBetween =
      prev !== undefined && token !== undefined && text.slice(prev.end, token.start).includes(',');
    const continues =
      current !== null &&
      current.label === label &&
      current.last === i - 1 &&
      (prefix === null || prefix === 'I' || prefix === 'L') &&
      !(commaBetween && splitByComma(label));
    if (continues && current) {
      current.last = i;
      current.conf = Math.min(current.conf, conf);
    } else {
      close();
      current = { label, first: i, last: i, conf };
    }
    if (prefix === 'L' || prefix === 'U') close();
  });
  close();
  return spans;
}
