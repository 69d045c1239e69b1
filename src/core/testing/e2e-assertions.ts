import { isJsonObject } from 'src/core/events/json-values';
import {
  deref,
  entriesOf,
  lineOf,
  toPlain,
  yamlError,
  type YamlSource,
} from 'src/core/training-data/yaml-source';
import { isMap, isScalar, isSeq } from 'yaml';

/**
 * Rasa Pro's e2e `assertions:` (3.10+, generally available in 3.12): checks under a user step,
 * run against the events of that user turn.
 *
 * ```yaml
 * test_cases:
 *   - test_case: book
 *     assertion_order_enabled: true     # each assertion matches after the previous one's event
 *     steps:
 *       - user: "fix my bike"
 *         assertions:
 *           - flow_started: book_repair
 *           - bot_uttered: { utter_name: utter_ask_bike_type }
 *       - user: "a city bike"
 *         assertions:
 *           - slot_was_set: [{ name: bike_type, value: city }]
 *           - slot_was_not_set: [{ name: weekday }]
 *           - bot_did_not_utter: { text_matches: "sorry" }
 * ```
 *
 * `generative_response_is_relevant` / `_grounded` need an LLM judge: they are read and reported
 * as skipped, never failed.
 */
export type E2eAssertion =
  | { readonly kind: 'flow_started'; readonly flowId: string; readonly line: number | undefined }
  | {
      readonly kind: 'flow_completed' | 'flow_cancelled';
      readonly flowId: string;
      readonly stepId: string | null;
      readonly line: number | undefined;
    }
  | {
      readonly kind: 'pattern_clarification_contains';
      readonly names: readonly string[];
      readonly line: number | undefined;
    }
  | { readonly kind: 'action_executed'; readonly action: string; readonly line: number | undefined }
  | {
      readonly kind: 'slot_was_set' | 'slot_was_not_set';
      readonly slots: readonly AssertedSlot[];
      readonly line: number | undefined;
    }
  | {
      readonly kind: 'bot_uttered' | 'bot_did_not_utter';
      readonly utterName: string | null;
      readonly textMatches: string | null;
      readonly buttons: readonly { readonly title: string; readonly payload: string | null }[];
      readonly line: number | undefined;
    }
  | {
      readonly kind: 'generative_response_is_relevant' | 'generative_response_is_grounded';
      readonly line: number | undefined;
    };

export interface AssertedSlot {
  readonly name: string;
  readonly hasValue: boolean;
  readonly value: unknown;
  readonly line: number | undefined;
}

export const ASSERTION_TYPES = [
  'flow_started',
  'flow_completed',
  'flow_cancelled',
  'pattern_clarification_contains',
  'action_executed',
  'slot_was_set',
  'slot_was_not_set',
  'bot_uttered',
  'bot_did_not_utter',
  'generative_response_is_relevant',
  'generative_response_is_grounded',
] as const;

/** The events of a turn an assertion looks at (Rasa's wire names). */
export type AssertionEvent =
  | { readonly type: 'user'; readonly text: string | null }
  | {
      readonly type: 'bot';
      readonly text: string | null;
      readonly utterAction: string | null;
      readonly buttons: readonly Record<string, unknown>[];
    }
  | { readonly type: 'slot'; readonly name: string; readonly value: unknown }
  | { readonly type: 'action'; readonly name: string }
  | {
      readonly type: 'flow_started';
      readonly flowId: string | null;
      readonly metadata: Record<string, unknown>;
    }
  | {
      readonly type: 'flow_completed' | 'flow_cancelled';
      readonly flowId: string | null;
      readonly stepId: string | null;
    };

/** The wire events assertions look at, in order. */
export function assertionEventsOf(events: readonly Record<string, unknown>[]): AssertionEvent[] {
  const out: AssertionEvent[] = [];
  const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);
  for (const e of events) {
    const metadata = isJsonObject(e.metadata) ? e.metadata : {};
    switch (e.event) {
      case 'user':
        out.push({ type: 'user', text: str(e.text) });
        break;
      case 'bot': {
        const data = isJsonObject(e.data) ? e.data : {};
        const buttons = Array.isArray(data.buttons) ? data.buttons.filter(isJsonObject) : [];
        out.push({
          type: 'bot',
          text: str(e.text),
          utterAction: str(metadata.utter_action),
          buttons,
        });
        break;
      }
      case 'slot':
        if (typeof e.name === 'string') {
          out.push({ type: 'slot', name: e.name, value: e.value ?? null });
        }
        break;
      case 'action':
        if (typeof e.name === 'string') out.push({ type: 'action', name: e.name });
        break;
      case 'flow_started':
        out.push({ type: 'flow_started', flowId: str(e.flow_id), metadata });
        break;
      case 'flow_completed':
      case 'flow_cancelled':
        out.push({ type: e.event, flowId: str(e.flow_id), stepId: str(e.step_id) });
        break;
      default:
        break;
    }
  }
  return out;
}

// --- Reading -----------------------------------------------------------------------------------

function lineOfNode(source: YamlSource, node: unknown): number | undefined {
  return isMap(node) || isSeq(node) || isScalar(node) ? lineOf(source, node) : undefined;
}

function text(
  source: YamlSource,
  node: unknown,
  what: string,
  line: number | undefined,
  inCase: (p: string) => string,
): string {
  const n = deref(source, node);
  if (isScalar(n) && (typeof n.value === 'string' || typeof n.value === 'number')) {
    return String(n.value);
  }
  yamlError(source, lineOfNode(source, n) ?? line, inCase(`${what} must be a string`));
}

function optionalText(
  source: YamlSource,
  data: Record<string, unknown>,
  key: string,
  line: number | undefined,
  inCase: (p: string) => string,
): string | null {
  const v = data[key];
  if (v === undefined || v === null) return null;
  if (typeof v === 'string' || typeof v === 'number') return String(v);
  yamlError(source, line, inCase(`\`${key}\` must be a string`));
}

/** Reads the `assertions:` list of a user step. */
export function readAssertions(
  source: YamlSource,
  raw: unknown,
  line: number | undefined,
  inCase: (problem: string) => string,
): E2eAssertion[] {
  const node = deref(source, raw);
  if (isScalar(node) && node.value === null) return [];
  if (!isSeq(node)) yamlError(source, line, inCase('`assertions` must be a list'));
  return node.items.map((item) => readAssertion(source, deref(source, item), line, inCase));
}

function readAssertion(
  source: YamlSource,
  node: unknown,
  stepLine: number | undefined,
  inCase: (problem: string) => string,
): E2eAssertion {
  const line = lineOfNode(source, node) ?? stepLine;
  if (!isMap(node) || node.items.length !== 1) {
    yamlError(
      source,
      line,
      inCase(`an assertion must be one of ${ASSERTION_TYPES.join(', ')} with its value`),
    );
  }
  const [entry] = entriesOf(source, node);
  const kind = entry!.key;
  const value = deref(source, entry!.value);
  const plain = toPlain(source, value);
  const fields = isJsonObject(plain) ? plain : {};
  switch (kind) {
    case 'flow_started':
      return { kind, flowId: text(source, value, '`flow_started`', line, inCase), line };
    case 'action_executed':
      return { kind, action: text(source, value, '`action_executed`', line, inCase), line };
    case 'flow_completed':
    case 'flow_cancelled': {
      const flowId = optionalText(source, fields, 'flow_id', line, inCase);
      if (flowId === null) yamlError(source, line, inCase(`\`${kind}\` needs a \`flow_id\``));
      return {
        kind,
        flowId,
        stepId: optionalText(source, fields, 'flow_step_id', line, inCase),
        line,
      };
    }
    case 'pattern_clarification_contains': {
      if (!Array.isArray(plain)) {
        yamlError(
          source,
          line,
          inCase('`pattern_clarification_contains` must be a list of flow names'),
        );
      }
      return { kind, names: plain.map(String), line };
    }
    case 'slot_was_set':
    case 'slot_was_not_set': {
      if (!isSeq(value)) {
        yamlError(source, line, inCase(`\`${kind}\` must be a list of {name, value}`));
      }
      const slots = value.items.map((item): AssertedSlot => {
        const slotNode = deref(source, item);
        const slotLine = lineOfNode(source, slotNode) ?? line;
        const slot = toPlain(source, slotNode);
        if (!isJsonObject(slot) || typeof slot.name !== 'string') {
          yamlError(source, slotLine, inCase(`each \`${kind}\` item needs a slot \`name\``));
        }
        return {
          name: slot.name,
          hasValue: Object.hasOwn(slot, 'value'),
          value: slot.value,
          line: slotLine,
        };
      });
      return { kind, slots, line };
    }
    case 'bot_uttered':
    case 'bot_did_not_utter': {
      const utterName = optionalText(source, fields, 'utter_name', line, inCase);
      const textMatches = optionalText(source, fields, 'text_matches', line, inCase);
      if (textMatches !== null) {
        try {
          new RegExp(textMatches, 'u');
        } catch (error) {
          yamlError(
            source,
            line,
            inCase(`\`text_matches\` is not a valid pattern: ${(error as Error).message}`),
          );
        }
      }
      const rawButtons = fields.buttons ?? [];
      if (!Array.isArray(rawButtons)) yamlError(source, line, inCase('`buttons` must be a list'));
      const buttons = rawButtons.map((b) => {
        if (!isJsonObject(b) || typeof b.title !== 'string') {
          yamlError(source, line, inCase('each button needs a `title`'));
        }
        return { title: b.title, payload: typeof b.payload === 'string' ? b.payload : null };
      });
      if (utterName === null && textMatches === null && buttons.length === 0) {
        yamlError(
          source,
          line,
          inCase(
            `a '${kind}' assertion is empty; it needs at least one of utter_name, text_matches, buttons`,
          ),
        );
      }
      return { kind, utterName, textMatches, buttons, line };
    }
    case 'generative_response_is_relevant':
    case 'generative_response_is_grounded':
      return { kind, line };
    default:
      return yamlError(source, line, inCase(`invalid assertion type '${kind}'`));
  }
}

// --- Running -----------------------------------------------------------------------------------

export interface AssertionFailure {
  readonly assertion: E2eAssertion;
  readonly line: number | undefined;
  readonly message: string;
}

export interface AssertionOutcome {
  readonly failure: AssertionFailure | null;
  /** Why assertions were not checked (LLM-judged ones). */
  readonly skipped: string[];
}

type Check =
  | { readonly ok: true; readonly at: number }
  | { readonly ok: false; readonly message: string; readonly line?: number };

const ORDER_NOTE =
  ' (assertion_order_enabled: only the events after the previous assertion’s match were searched)';

/**
 * Runs a user step's assertions against the events of its turn, Rasa's way: each passes when an
 * event of the turn satisfies it; the first that does not is the failure. With
 * `assertion_order_enabled`, each one only sees the events after the previous one's match.
 */
export function runAssertions(
  assertions: readonly E2eAssertion[],
  turn: readonly AssertionEvent[],
  orderEnabled: boolean,
  equal: (a: unknown, b: unknown) => boolean,
): AssertionOutcome {
  const skipped: string[] = [];
  let from = 0;
  for (const assertion of assertions) {
    if (
      assertion.kind === 'generative_response_is_relevant' ||
      assertion.kind === 'generative_response_is_grounded'
    ) {
      skipped.push(
        `'${assertion.kind}' (line ${assertion.line ?? '?'}) needs an LLM judge, which Parley does not run; skipped`,
      );
      continue;
    }
    const events = orderEnabled ? turn.slice(from) : turn;
    const check = checkOne(assertion, events, equal);
    if (!check.ok) {
      return {
        failure: {
          assertion,
          line: check.line ?? assertion.line,
          message: check.message + (orderEnabled && from > 0 ? ORDER_NOTE : ''),
        },
        skipped,
      };
    }
    if (orderEnabled && check.at >= 0) from += check.at + 1;
  }
  return { failure: null, skipped };
}

function indexWhere(
  events: readonly AssertionEvent[],
  test: (e: AssertionEvent) => boolean,
): number {
  return events.findIndex(test);
}

function found(at: number, message: string): Check {
  return at >= 0 ? { ok: true, at } : { ok: false, message };
}

function botMatches(
  e: AssertionEvent,
  a: Extract<E2eAssertion, { kind: 'bot_uttered' | 'bot_did_not_utter' }>,
): boolean {
  if (e.type !== 'bot') return false;
  if (a.utterName !== null && e.utterAction !== a.utterName) return false;
  if (a.textMatches !== null && !new RegExp(a.textMatches, 'u').test(e.text ?? '')) return false;
  if (a.buttons.length > 0) {
    if (e.buttons.length === 0) return false;
    const pairs = Math.min(e.buttons.length, a.buttons.length);
    for (let i = 0; i < pairs; i++) {
      const actual = e.buttons[i]!;
      const expected = a.buttons[i]!;
      if (actual.title !== expected.title || (actual.payload ?? null) !== expected.payload) {
        return false;
      }
    }
  }
  return true;
}

/** A value in a message: strings as they are, anything else as JSON. */
function shown(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value ?? null);
}

function checkOne(
  a: E2eAssertion,
  events: readonly AssertionEvent[],
  equal: (x: unknown, y: unknown) => boolean,
): Check {
  switch (a.kind) {
    case 'flow_started':
      return found(
        indexWhere(events, (e) => e.type === 'flow_started' && e.flowId === a.flowId),
        `Flow with id '${a.flowId}' did not start.`,
      );
    case 'flow_completed':
    case 'flow_cancelled': {
      const verb = a.kind === 'flow_completed' ? 'did not complete' : 'was not cancelled';
      const at = indexWhere(events, (e) => e.type === a.kind && e.flowId === a.flowId);
      if (at < 0) return { ok: false, message: `Flow with id '${a.flowId}' ${verb}.` };
      const event = events[at] as Extract<
        AssertionEvent,
        { type: 'flow_completed' | 'flow_cancelled' }
      >;
      if (a.stepId !== null && event.stepId !== a.stepId) {
        return {
          ok: false,
          message: `Flow with id '${a.flowId}' ${verb} at expected step id '${a.stepId}'. The actual step id was '${event.stepId ?? ''}'.`,
        };
      }
      return { ok: true, at };
    }
    case 'pattern_clarification_contains': {
      const at = indexWhere(
        events,
        (e) => e.type === 'flow_started' && e.flowId === 'pattern_clarification',
      );
      if (at < 0) return { ok: false, message: "'pattern_clarification' pattern did not trigger." };
      const event = events[at] as Extract<AssertionEvent, { type: 'flow_started' }>;
      const names = Array.isArray(event.metadata.names) ? event.metadata.names.map(String) : [];
      const expected = new Set(a.names);
      const same = names.length === expected.size && names.every((n) => expected.has(n));
      if (!same) {
        return {
          ok: false,
          message: `'pattern_clarification' pattern did not contain the expected options. Expected options: ${a.names.join(', ')}; actual: ${names.join(', ')}.`,
        };
      }
      return { ok: true, at };
    }
    case 'action_executed':
      return found(
        indexWhere(events, (e) => e.type === 'action' && e.name === a.action),
        `Action '${a.action}' did not execute.`,
      );
    case 'slot_was_set': {
      let last = -1;
      for (const slot of a.slots) {
        const sets = events
          .map((e, i) => [e, i] as const)
          .filter(([e]) => e.type === 'slot' && e.name === slot.name);
        if (sets.length === 0) {
          return { ok: false, message: `Slot '${slot.name}' was not set.`, line: slot.line };
        }
        const match = slot.hasValue
          ? sets.find(([e]) => e.type === 'slot' && equal(e.value, slot.value))
          : sets[0];
        if (!match) {
          const actual = sets[sets.length - 1]![0] as Extract<AssertionEvent, { type: 'slot' }>;
          return {
            ok: false,
            message: `Slot '${slot.name}' was set to a different value '${shown(actual.value)}' than the expected '${shown(slot.value)}' value.`,
            line: slot.line,
          };
        }
        last = match[1];
      }
      return { ok: true, at: last };
    }
    case 'slot_was_not_set': {
      let last = -1;
      for (const slot of a.slots) {
        let at = -1;
        events.forEach((e, i) => {
          if (e.type === 'slot' && e.name === slot.name) at = i;
        });
        if (at < 0) continue;
        last = at;
        const value = (events[at] as Extract<AssertionEvent, { type: 'slot' }>).value;
        if (!slot.hasValue && value !== null) {
          return {
            ok: false,
            message: `Slot '${slot.name}' was set to '${shown(value)}' but it should not have been set.`,
            line: slot.line,
          };
        }
        if (slot.hasValue && equal(value, slot.value)) {
          return {
            ok: false,
            message: `Slot '${slot.name}' was set to '${shown(slot.value)}' but it should not have been set.`,
            line: slot.line,
          };
        }
      }
      return { ok: true, at: last };
    }
    case 'bot_uttered': {
      const what = [
        a.utterName !== null ? `the '${a.utterName}' response` : null,
        a.textMatches !== null ? `a text matching '${a.textMatches}'` : null,
        a.buttons.length > 0 ? 'the expected buttons' : null,
      ].filter((x) => x !== null);
      return found(
        indexWhere(events, (e) => botMatches(e, a)),
        `Bot did not utter any response with ${what.join(' and ')}.`,
      );
    }
    case 'bot_did_not_utter': {
      const at = indexWhere(events, (e) => botMatches(e, a));
      if (at >= 0) {
        const e = events[at] as Extract<AssertionEvent, { type: 'bot' }>;
        return {
          ok: false,
          message: `Bot uttered a forbidden response: ${e.utterAction ?? ''}${e.utterAction && e.text ? ' ' : ''}${e.text !== null ? `'${e.text}'` : ''}.`,
        };
      }
      return { ok: true, at: -1 };
    }
    case 'generative_response_is_relevant':
    case 'generative_response_is_grounded':
      return { ok: true, at: -1 };
  }
}

/** One line per event, as the failure report lists what happened in the turn. */
export function transcriptOf(events: readonly AssertionEvent[]): string[] {
  return events.map((e) => {
    switch (e.type) {
      case 'user':
        return `user: ${e.text ?? ''}`;
      case 'bot':
        return `bot: ${e.utterAction ?? e.text ?? ''}`;
      case 'slot':
        return `slot_was_set: ${e.name}: ${JSON.stringify(e.value)}`;
      case 'action':
        return `action_executed: ${e.name}`;
      case 'flow_started':
        return `flow_started: ${e.flowId ?? ''}`;
      case 'flow_completed':
      case 'flow_cancelled':
        return `${e.type}: ${e.flowId ?? ''} (${e.stepId ?? ''})`;
    }
  });
}
