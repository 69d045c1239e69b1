import { CANNOT_HANDLE_DEFAULT, type Command } from 'src/core/flows/commands';
import { type FlowsList } from 'src/core/flows/flows-list';

/**
 * The action lists LLM command generators answer with, one action per line, turned into
 * commands. Two syntaxes:
 * - v1 (single-step prompts): `StartFlow(transfer_money)`, `SetSlot(amount, 50)`, `CancelFlow()`,
 *   `Clarify(a, b)`, `SkipQuestion()`, `SearchAndReply()`, `ChitChat()`, `HumanHandoff()`,
 *   `RepeatLastBotMessages()`, `CannotHandle()`;
 * - v2 (compact prompts): `start flow transfer_money`, `set slot amount 50`, `cancel flow`,
 *   `disambiguate flows a b`, `provide info`, `offtopic reply`, `hand over`, `repeat message`,
 *   `skip question`, `cannot handle` — lines may start with bullets or numbers.
 *
 * Each line is tried against every action pattern, so a line may give several commands. Flow
 * ids must be user flows of `flows`; unknown ones are dropped.
 */

export type CommandSyntax = 'v1' | 'v2';

type Parsed = Command | null;

interface ActionPattern {
  readonly v1: RegExp;
  readonly v2: RegExp;
  readonly build: (m: RegExpExecArray, flows: FlowsList) => Parsed;
}

/** Leading bullets, numbering and spaces (anything but letters and `_`). */
const LEAD = String.raw`^[^\p{L}\p{M}_]*`;

function v2(body: string): RegExp {
  return new RegExp(LEAD + body, 'u');
}

const NONE_VALUES = new Set(['[missing information]', '[missing]', 'None', 'undefined', 'null']);

/** Strips quotes and spaces from both ends (Python `strip("'\" ")`). */
export function cleanValue(value: string): string {
  return value.replace(/^['" ]+/, '').replace(/['" ]+$/, '');
}

/** `null` for the placeholders an LLM writes for "no value". */
export function nullableValue(value: string): string | null {
  return value === '' || NONE_VALUES.has(value) ? null : value;
}

function userFlowIds(flows: FlowsList): Set<string> {
  return new Set(flows.userFlows.map((f) => f.id));
}

function startFlow(flowId: string | null, flows: FlowsList): Parsed {
  return flowId !== null && userFlowIds(flows).has(flowId)
    ? { command: 'start flow', flow: flowId }
    : null;
}

/** Clarify options: split on commas and spaces, unquoted, sorted (as Rasa does). */
function cleanOptions(text: string): string[] {
  return text
    .replace(/,/g, ' ')
    .split(/\s+/)
    .filter((o) => o.trim() !== '')
    .map((o) =>
      o
        .trim()
        .replace(/^"+|"+$/g, '')
        .replace(/^'+|'+$/g, ''),
    )
    .sort();
}

function clarify(optionsText: string, flows: FlowsList): Parsed {
  const options = cleanOptions(optionsText);
  if (options.length === 0) return null;
  const ids = userFlowIds(flows);
  const valid = options.filter((o) => ids.has(o));
  if (new Set(valid).size === 1) return startFlow(valid[0] as string, flows);
  if (valid.length > 1) return { command: 'clarify', options: valid };
  return null;
}

const PATTERNS: readonly ActionPattern[] = [
  {
    v1: /SetSlot\(['"]?([a-zA-Z_][a-zA-Z0-9_-]*)['"]?, ?['"]?(.*)['"]?\)/,
    v2: v2(String.raw`set slot ['"]?([a-zA-Z_][a-zA-Z0-9_-]*)['"]? ['"]?(.+?)['"]?$`),
    build: (m, flows) => {
      const name = (m[1] as string).trim();
      const value = nullableValue(cleanValue(m[2] as string));
      // An LLM sometimes starts a flow by setting `flow_name`.
      if (name === 'flow_name') return startFlow(value, flows);
      return { command: 'set slot', name, value, extractor: 'LLM' };
    },
  },
  {
    v1: /StartFlow\(['"]?([a-zA-Z0-9_-]+)['"]?\)/,
    v2: v2(String.raw`start flow ['"]?([a-zA-Z0-9_-]+)['"]?`),
    build: (m, flows) => startFlow((m[1] as string).trim(), flows),
  },
  {
    v1: /CancelFlow\(\)/,
    v2: v2('cancel flow$'),
    build: () => ({ command: 'cancel flow' }),
  },
  {
    v1: /ChitChat\(\)/,
    v2: v2('offtopic reply$'),
    build: () => ({ command: 'chitchat' }),
  },
  {
    v1: /SkipQuestion\(\)/,
    v2: v2('skip question$'),
    build: () => ({ command: 'skip question' }),
  },
  {
    v1: /SearchAndReply\(\)/,
    v2: v2('provide info$'),
    build: () => ({ command: 'knowledge' }),
  },
  {
    v1: /HumanHandoff\(\)/,
    v2: v2('hand over$'),
    build: () => ({ command: 'human handoff' }),
  },
  {
    v1: /Clarify\((["'a-zA-Z0-9_, ]*)\)/,
    v2: v2(String.raw`disambiguate flows (["'a-zA-Z0-9_, ]*)$`),
    build: (m, flows) => clarify(m[1] as string, flows),
  },
  {
    v1: /RepeatLastBotMessages\(\)/,
    v2: v2('repeat message$'),
    build: () => ({ command: 'repeat' }),
  },
  {
    v1: /CannotHandle\(\)/,
    v2: v2('cannot handle$'),
    build: () => ({ command: 'cannot handle', reason: CANNOT_HANDLE_DEFAULT }),
  },
];

/** Python's `splitlines()` boundaries. */
// eslint-disable-next-line no-control-regex
const LINE_BREAK = /\r\n|[\n\r\v\f\x1c-\x1e\x85\u2028\u2029]/;

/**
 * Parses an LLM's action list into commands (possibly none). `flows` are the flows the LLM was
 * allowed to start; `start flow` / `clarify` of anything else is dropped.
 */
export function parseCommandDsl(
  actions: string | null | undefined,
  flows: FlowsList,
  syntax: CommandSyntax,
): Command[] {
  if (actions === null || actions === undefined || actions.trim() === '') return [];
  const commands: Command[] = [];
  for (const rawLine of actions.trim().split(LINE_BREAK)) {
    const line = rawLine.trim();
    for (const pattern of PATTERNS) {
      const m = pattern[syntax].exec(line);
      if (m === null) continue;
      const command = pattern.build(m, flows);
      if (command !== null) commands.push(command);
    }
  }
  return commands;
}
