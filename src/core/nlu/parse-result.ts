import {
  type IntentPrediction,
  type IntentScore,
  type NluMessage,
  type ParsedEntity,
  type ResponseSelectorOutput,
} from 'src/core/nlu/message';

/** Rasa's message parse data (`POST /model/parse`, `UserUttered.parse_data`). */
export interface ParseResult {
  text: string;
  intent: IntentPrediction;
  entities: ParsedEntity[];
  /** [start, end] of each token, in code points. */
  text_tokens: Array<[number, number]>;
  intent_ranking: IntentScore[];
  response_selector?: ResponseSelectorOutput;
}

export interface ParseOptions {
  /** Keep the UTF-16 offsets of JavaScript instead of Python code-point offsets. */
  readonly utf16Offsets?: boolean;
}

const SURROGATE = /[\uD800-\uDBFF]/;

/** Maps UTF-16 offsets to code-point offsets (identity for BMP-only text). */
export function codePointOffsets(text: string): (utf16: number) => number {
  if (!SURROGATE.test(text)) return (i) => i;
  const table = new Int32Array(text.length + 1);
  let cp = 0;
  for (let i = 0; i < text.length; i++) {
    table[i] = cp;
    const c = text.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      table[i + 1] = cp;
      i++;
    }
    cp++;
  }
  table[text.length] = cp;
  return (i) => table[i] ?? i;
}

/** Builds the Rasa parse result of a processed message. */
export function toParseResult(message: NluMessage, options: ParseOptions = {}): ParseResult {
  const map = options.utf16Offsets ? (i: number): number => i : codePointOffsets(message.text);
  const intent: IntentPrediction = message.intent
    ? { ...message.intent }
    : { name: null, confidence: 0 };
  const rs = message.responseSelector;
  if (rs && intent.name && rs.all_retrieval_intents.includes(intent.name)) {
    const pred = rs[intent.name] ?? rs['default'];
    if (pred && !Array.isArray(pred) && pred.response.intent_response_key) {
      intent.full_retrieval_intent_name = pred.response.intent_response_key;
    }
  }
  const result: ParseResult = {
    text: message.text,
    intent,
    entities: message.entities.map((e) => ({ ...e, start: map(e.start), end: map(e.end) })),
    text_tokens: message.tokens.map((t): [number, number] => [map(t.start), map(t.end)]),
    intent_ranking: (message.intentRanking ?? []).map((r) => ({ ...r })),
  };
  if (rs) result.response_selector = rs;
  return result;
}
