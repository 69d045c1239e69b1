import { DialogueError } from 'src/core/errors/dialogue-error';
import { fakeValue } from './fake-values';
import { recognize, resolveOverlaps, type PiiSpan } from './recognizers';

export type Substitution = 'mask' | 'text' | 'faker';

export const SUBSTITUTIONS: readonly Substitution[] = ['mask', 'text', 'faker'];

export interface AnonymizationRule {
  /** Entity type, upper case (Presidio's names, or an NLU entity name upper-cased). */
  readonly entity: string;
  readonly substitution: Substitution;
  /** `text` only: the replacement; null → `<ENTITY>`. */
  readonly value: string | null;
}

export interface AnonymizationRuleList {
  readonly id: string;
  readonly rules: readonly AnonymizationRule[];
}

/** The `anonymization` entry of endpoints.yml (Rasa Pro 3.6–3.12 keys). */
export interface AnonymizationConfig {
  /** `metadata.language`, kept for the record: the recognisers here are language-neutral. */
  readonly language: string | null;
  readonly ruleLists: readonly AnonymizationRuleList[];
}

function invalid(where: string, message: string): never {
  throw new DialogueError('CONFIG.INVALID', `${where}: ${message}`);
}

const isMapping = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Validates the `anonymization` entry: `rule_lists` of `{id, rules: [{entity, substitution,
 * value}]}`; `substitution` defaults to `mask`; `metadata` (language, model_name,
 * model_provider) is accepted — Parley loads no NER model. Errors name the key.
 */
export function parseAnonymizationConfig(where: string, raw: unknown): AnonymizationConfig | null {
  if (raw === undefined || raw === null) return null;
  const at = `${where}: anonymization`;
  if (!isMapping(raw)) invalid(at, 'must be a mapping (metadata, rule_lists)');
  const metadata = raw.metadata;
  if (metadata !== undefined && metadata !== null && !isMapping(metadata)) {
    invalid(`${at}.metadata`, 'must be a mapping (language, model_name, model_provider)');
  }
  const language =
    isMapping(metadata) && typeof metadata.language === 'string' ? metadata.language : null;
  const lists = raw.rule_lists;
  if (!Array.isArray(lists) || lists.length === 0) {
    invalid(`${at}.rule_lists`, 'must be a non-empty list of {id, rules}');
  }
  const ids = new Set<string>();
  const ruleLists = lists.map((list: unknown, i): AnonymizationRuleList => {
    const lat = `${at}.rule_lists[${i}]`;
    if (!isMapping(list)) invalid(lat, 'must be a mapping {id, rules}');
    if (typeof list.id !== 'string' || list.id === '') {
      invalid(`${lat}.id`, 'must be a non-empty string');
    }
    if (ids.has(list.id)) invalid(`${lat}.id`, `'${list.id}' is used twice`);
    ids.add(list.id);
    if (!Array.isArray(list.rules) || list.rules.length === 0) {
      invalid(`${lat}.rules`, 'must be a non-empty list of {entity, substitution}');
    }
    const rules = list.rules.map((rule: unknown, j): AnonymizationRule => {
      const rat = `${lat}.rules[${j}]`;
      if (!isMapping(rule)) invalid(rat, 'must be a mapping {entity, substitution, value}');
      if (typeof rule.entity !== 'string' || !/^[A-Z][A-Z0-9_]*$/.test(rule.entity)) {
        invalid(`${rat}.entity`, 'must be an entity type in upper case (PERSON, EMAIL_ADDRESS, …)');
      }
      const substitution = rule.substitution ?? 'mask';
      if (!SUBSTITUTIONS.includes(substitution as Substitution)) {
        invalid(
          `${rat}.substitution`,
          `${JSON.stringify(substitution)} is not one of ${SUBSTITUTIONS.join(', ')}`,
        );
      }
      const value = rule.value;
      if (value !== undefined && value !== null && typeof value !== 'string') {
        invalid(`${rat}.value`, 'must be a string');
      }
      if (typeof value === 'string' && substitution !== 'text') {
        invalid(`${rat}.value`, "is only for substitution 'text'");
      }
      return {
        entity: rule.entity,
        substitution: substitution as Substitution,
        value: typeof value === 'string' ? value : null,
      };
    });
    return { id: list.id, rules };
  });
  return { language, ruleLists };
}

type Json = unknown;
type JsonObject = Record<string, Json>;

/** A replaced span: where it was in the original text, where its substitute is now. */
interface Replacement {
  readonly originalStart: number;
  readonly originalEnd: number;
  readonly start: number;
  readonly end: number;
}

/**
 * Applies one rule list to events in Rasa's flat broker shape (`{"sender_id", "event", …}`), as
 * Rasa Pro's anonymisation pipeline does for `user`, `bot`, `slot` and `entities` events:
 * user text (and `parse_data.text`), entity values, slot values and bot text. PII is found by
 * the NLU's extracted entities of user messages (their type is the entity name upper-cased)
 * and by deterministic recognisers (EMAIL_ADDRESS, PHONE_NUMBER, CREDIT_CARD, IBAN_CODE,
 * IP_ADDRESS, URL, US_SSN); only types the rule list names are replaced. A value once found in
 * a conversation's events (an entity "Anna") is replaced wherever it appears later in the same
 * call — the bot's "Hi Anna", the slot set to "Anna".
 */
export class Anonymizer {
  private readonly rules: ReadonlyMap<string, AnonymizationRule>;
  private readonly types: ReadonlySet<string>;

  constructor(readonly ruleList: AnonymizationRuleList) {
    this.rules = new Map(ruleList.rules.map((r) => [r.entity, r]));
    this.types = new Set(this.rules.keys());
  }

  /** The substitute of `original` of `type` (a type with a rule). */
  substitute(type: string, original: string): string {
    const rule = this.rules.get(type);
    if (rule === undefined) return original;
    switch (rule.substitution) {
      case 'text':
        return rule.value ?? `<${type}>`;
      case 'faker':
        return fakeValue(this.ruleList.id, type, original) ?? mask(original);
      case 'mask':
        return mask(original);
    }
  }

  /**
   * The anonymised copies of one conversation's events, in order. The input is not changed.
   * Events of other types pass unchanged.
   */
  anonymizeEvents(events: readonly JsonObject[]): JsonObject[] {
    const known = new Map<string, string>(); // original value → substitute
    return events.map((e) => this.anonymizeEvent(e, known));
  }

  private anonymizeEvent(event: JsonObject, known: Map<string, string>): JsonObject {
    switch (event.event) {
      case 'user':
        return this.user(event, known);
      case 'bot':
        return typeof event.text === 'string'
          ? { ...event, text: this.text(event.text, [], known).text }
          : event;
      case 'slot':
        return { ...event, value: this.value(event.value, known) };
      case 'entities':
        return Array.isArray(event.entities)
          ? { ...event, entities: this.entities(event.entities, null, [], known) }
          : event;
      default:
        return event;
    }
  }

  private user(event: JsonObject, known: Map<string, string>): JsonObject {
    const parse = isMapping(event.parse_data) ? event.parse_data : null;
    const rawEntities = parse !== null && Array.isArray(parse.entities) ? parse.entities : [];
    const text = typeof event.text === 'string' ? event.text : null;
    const entitySpans = text === null ? [] : this.entitySpans(text, rawEntities);
    const done = text === null ? null : this.text(text, entitySpans, known);
    const out: JsonObject = { ...event };
    if (done !== null) out.text = done.text;
    if (parse !== null) {
      const p: JsonObject = { ...parse };
      if (typeof parse.text === 'string') {
        p.text =
          parse.text === text && done !== null ? done.text : this.text(parse.text, [], known).text;
      }
      if (Array.isArray(parse.entities)) {
        p.entities = this.entities(parse.entities, text, done?.replacements ?? [], known);
      }
      out.parse_data = p;
    }
    return out;
  }

  /** Spans of the extracted entities whose type has a rule (by start/end, else by value). */
  private entitySpans(text: string, entities: readonly Json[]): PiiSpan[] {
    const spans: PiiSpan[] = [];
    for (const e of entities) {
      if (!isMapping(e) || typeof e.entity !== 'string') continue;
      const type = e.entity.toUpperCase();
      if (!this.types.has(type)) continue;
      const { start, end } = e;
      if (
        typeof start === 'number' &&
        typeof end === 'number' &&
        Number.isInteger(start) &&
        Number.isInteger(end) &&
        start >= 0 &&
        end <= text.length &&
        start < end
      ) {
        spans.push({ start, end, type });
        continue;
      }
      if (typeof e.value === 'string' && e.value !== '') {
        const at = text.indexOf(e.value);
        if (at >= 0) spans.push({ start: at, end: at + e.value.length, type });
      }
    }
    return spans;
  }

  /** Replaces the given spans, recognised patterns and values known from earlier events. */
  private text(
    text: string,
    entitySpans: readonly PiiSpan[],
    known: Map<string, string>,
  ): { text: string; replacements: Replacement[] } {
    const spans = resolveOverlaps([
      ...entitySpans,
      ...recognize(text, this.types),
      ...knownSpans(text, known),
    ]);
    let out = '';
    let at = 0;
    const replacements: Replacement[] = [];
    for (const s of spans) {
      const original = text.slice(s.start, s.end);
      const sub =
        s.type === KNOWN
          ? (known.get(original) ?? mask(original))
          : this.substitute(s.type, original);
      if (s.type !== KNOWN) known.set(original, sub);
      out += text.slice(at, s.start);
      replacements.push({
        originalStart: s.start,
        originalEnd: s.end,
        start: out.length,
        end: out.length + sub.length,
      });
      out += sub;
      at = s.end;
    }
    out += text.slice(at);
    return { text: out, replacements };
  }

  /**
   * Entity values (and, for a user message, start/end moved to the anonymised text): an
   * entity of a ruled type gets its value substituted; any string value is also searched for
   * recognised patterns and known values.
   */
  private entities(
    entities: readonly Json[],
    text: string | null,
    replacements: readonly Replacement[],
    known: Map<string, string>,
  ): Json[] {
    return entities.map((e) => {
      if (!isMapping(e)) return e;
      const out: JsonObject = { ...e };
      const type = typeof e.entity === 'string' ? e.entity.toUpperCase() : null;
      if (typeof e.value === 'string') {
        if (type !== null && this.types.has(type)) {
          const sub = known.get(e.value) ?? this.substitute(type, e.value);
          known.set(e.value, sub);
          out.value = sub;
        } else {
          out.value = this.text(e.value, [], known).text;
        }
      } else if (e.value !== undefined) {
        out.value = this.value(e.value, known);
      }
      if (text !== null && typeof e.start === 'number' && typeof e.end === 'number') {
        out.start = moved(e.start, replacements, false);
        out.end = moved(e.end, replacements, true);
      }
      return out;
    });
  }

  /** A slot value: strings anonymised (a known value as a whole, else by patterns), recursively. */
  private value(value: Json, known: Map<string, string>): Json {
    if (typeof value === 'string') return known.get(value) ?? this.text(value, [], known).text;
    if (Array.isArray(value)) return value.map((v) => this.value(v, known));
    if (isMapping(value)) {
      const out: JsonObject = {};
      for (const [k, v] of Object.entries(value)) out[k] = this.value(v, known);
      return out;
    }
    return value;
  }
}

/** Same length, every character `*` (Rasa Pro's `mask`). */
export function mask(original: string): string {
  return '*'.repeat([...original].length);
}

const KNOWN = '\u0000known';

/** Occurrences of values already replaced earlier in the conversation (whole words). */
function knownSpans(text: string, known: ReadonlyMap<string, string>): PiiSpan[] {
  const spans: PiiSpan[] = [];
  for (const original of known.keys()) {
    if (original.length < 2) continue;
    let from = 0;
    for (;;) {
      const at = text.indexOf(original, from);
      if (at < 0) break;
      const end = at + original.length;
      const before = at === 0 ? '' : text.charAt(at - 1);
      const after = text.charAt(end);
      if (!/[\p{L}\p{N}]/u.test(before) && !/[\p{L}\p{N}]/u.test(after)) {
        spans.push({ start: at, end, type: KNOWN });
      }
      from = end;
    }
  }
  return spans;
}

/** An offset of the original text moved into the anonymised one. */
function moved(offset: number, replacements: readonly Replacement[], isEnd: boolean): number {
  let delta = 0;
  for (const r of replacements) {
    if (offset <= r.originalStart) break;
    if (offset >= r.originalEnd) {
      delta = r.end - r.originalEnd;
      continue;
    }
    return isEnd ? r.end : r.start; // inside a replaced span
  }
  return offset + delta;
}
