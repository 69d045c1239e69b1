import { type Domain } from 'src/core/domain/domain';
import { botUttered, type BotUttered } from 'src/core/events/bot-uttered';
import { type JsonObject } from 'src/core/events/event-base';
import { extendable, isJsonObject } from 'src/core/events/json-values';
import { renderTemplate } from 'src/core/flows/jinja';

/** Python's `str()` of a JSON value, as `str.format` would insert it. */
export function pythonStr(value: unknown): string {
  if (value === null || value === undefined) return 'None';
  if (value === true) return 'True';
  if (value === false) return 'False';
  if (typeof value === 'number') {
    return Number.isInteger(value) && !Object.is(value, -0) && Math.abs(value) < 1e16
      ? String(value)
      : String(value);
  }
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) return `[${value.map(pythonRepr).join(', ')}]`;
  if (isJsonObject(value)) {
    return `{${Object.entries(value)
      .map(([k, v]) => `${pythonRepr(k)}: ${pythonRepr(v)}`)
      .join(', ')}}`;
  }
  return JSON.stringify(value) ?? '';
}

function pythonRepr(value: unknown): string {
  return typeof value === 'string'
    ? `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`
    : pythonStr(value);
}

/**
 * Fills `{name}` placeholders like Python's `str.format` with the slot values and kwargs. When
 * a placeholder has no value the template stays unchanged (Rasa logs a warning).
 */
export function fillTemplate(text: string, values: Readonly<Record<string, unknown>>): string {
  const names = [...text.matchAll(/\{([^{}]*)\}/g)].map((m) => m[1] as string);
  if (names.length === 0) return text;
  if (names.some((n) => !(n in values))) return text;
  return text.replace(/\{([^{}]*)\}/g, (_m, n: string) => pythonStr(values[n]));
}

function fillDeep(
  value: unknown,
  values: Readonly<Record<string, unknown>>,
  fill: (text: string, values: Readonly<Record<string, unknown>>) => string = fillTemplate,
): unknown {
  if (typeof value === 'string') return fill(value, values);
  if (Array.isArray(value)) return value.map((v) => fillDeep(v, values, fill));
  if (isJsonObject(value)) {
    const out: JsonObject = {};
    for (const [k, v] of Object.entries(value)) out[k] = fillDeep(v, values, fill);
    return out;
  }
  return value;
}

/** Whether a response variation is a Jinja template (`metadata: {template: jinja}`, Rasa Pro). */
function isJinja(variation: JsonObject): boolean {
  return isJsonObject(variation.metadata) && variation.metadata.template === 'jinja';
}

const FILLED_KEYS = ['text', 'image', 'custom', 'buttons', 'attachment', 'quick_replies'];

function conditionsHold(variation: JsonObject, slots: Readonly<Record<string, unknown>>): boolean {
  const conditions = variation.condition;
  if (!Array.isArray(conditions)) return true;
  return conditions.every((c) => {
    if (!isJsonObject(c) || c.type !== 'slot' || typeof c.name !== 'string') return true;
    return JSON.stringify(slots[c.name] ?? null) === JSON.stringify(c.value ?? null);
  });
}

/**
 * Rasa's TemplatedNaturalLanguageGenerator: picks a variation of a response — channel-specific
 * ones for the output channel when there are any, conditional variations whose slot
 * conditions hold before unconditional ones — uniformly at random, and fills `{slot}`
 * placeholders (slots, then kwargs). A variation with `metadata.template: jinja` (Rasa Pro) is
 * rendered as Jinja instead, with `context` (the dialogue stack's context, `stackContext`) next
 * to the slots and kwargs. Null when the response does not exist.
 */
export function generateResponse(
  domain: Domain,
  name: string,
  slots: Readonly<Record<string, unknown>>,
  channel: string | null,
  kwargs: Readonly<Record<string, unknown>> = {},
  random: () => number = Math.random,
  stackContext: Readonly<JsonObject> = {},
): JsonObject | null {
  const variations = domain.responses[name];
  if (!variations || variations.length === 0) return null;
  const forChannel = variations.filter((v) => channel !== null && v.channel === channel);
  let pool = forChannel.length > 0 ? forChannel : variations.filter((v) => !v.channel);
  if (pool.length === 0) return null;
  const conditional = pool.filter((v) => Array.isArray(v.condition) && conditionsHold(v, slots));
  pool = conditional.length > 0 ? conditional : pool.filter((v) => !Array.isArray(v.condition));
  if (pool.length === 0) return null;
  const chosen: JsonObject = pool[Math.floor(random() * pool.length)] ?? pool[0] ?? {};
  const jinja = isJinja(chosen);
  const values = jinja ? { context: stackContext, ...slots, ...kwargs } : { ...slots, ...kwargs };
  const fill = jinja ? renderJinja : fillTemplate;
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(chosen)) {
    if (k === 'condition' || k === 'channel') continue;
    out[k] = FILLED_KEYS.includes(k) ? fillDeep(v, values, fill) : v;
  }
  return out;
}

function renderJinja(text: string, values: Readonly<Record<string, unknown>>): string {
  return renderTemplate(text, { ...values });
}

/** Response keys that `create_bot_utterance` moves into the event's text and data. */
const BOT_DATA_KEYS = new Set([
  'text',
  'elements',
  'quick_replies',
  'buttons',
  'attachment',
  'image',
  'custom',
]);

/**
 * Rasa's `create_bot_utterance`: a `bot` event from a response dict. `utterAction`, when given,
 * is the response's `utter_action` key (as if it were the dict's last key).
 */
export function botUtteranceFrom(
  message: JsonObject,
  timestamp: number,
  utterAction?: string,
): BotUttered {
  // The other keys become the metadata. Copied into a fresh object rather than deleted from a
  // copy: an object with deleted keys drops to V8's slow dictionary mode, and every later
  // spread and JSON.stringify of the event pays for it.
  const metadata: JsonObject = {};
  for (const k of Object.keys(message)) {
    if (!BOT_DATA_KEYS.has(k)) metadata[k] = message[k];
  }
  if (utterAction !== undefined) metadata.utter_action = utterAction;
  const text = message.text ?? null;
  const data: JsonObject = {
    elements: message.elements ?? null,
    quick_replies: message.quick_replies ?? null,
    buttons: message.buttons ?? null,
    attachment: message.attachment ?? message.image ?? null,
    image: message.image ?? null,
    custom: message.custom ?? null,
  };
  return botUttered({
    text: typeof text === 'string' ? text : text === null ? null : pythonStr(text),
    data,
    metadata,
    timestamp,
  });
}

/** The message a `bot` event sends to an output channel (Rasa `BotUttered.message()`). */
export function botMessageOf(event: BotUttered): JsonObject {
  const m = extendable(event.data);
  m.text = event.text;
  m.timestamp = event.timestamp;
  Object.assign(m, event.metadata);
  if (m.image !== undefined && m.image === m.attachment) m.attachment = null;
  return m;
}
