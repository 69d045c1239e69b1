import { parseWithRegex } from 'src/core/interpreter/regex-interpreter';
import { type ParseResult, type TrainedNlu } from 'src/core/nlu';

/** What a parse answers: the NLU's ParseResult, or the `/intent{…}` shortcut's data. */
export type ParseData = ParseResult | ReturnType<typeof parseWithRegex>;

/**
 * Parses a user message as Rasa does: text of the form `/intent{"entity": "value"}` bypasses
 * the NLU (RegexMessageHandler); other text runs through the loaded NLU pipeline. Without an
 * NLU (a domain or core-only model) the intent is null with confidence 0.
 */
export function parseText(nlu: TrainedNlu | undefined, text: string): ParseData {
  if (text.trim().startsWith('/')) {
    const shortcut = parseWithRegex(text);
    if (shortcut.intent.name !== undefined) return shortcut;
  }
  if (nlu === undefined) {
    return {
      text,
      intent: { name: null, confidence: 0 },
      entities: [],
      text_tokens: [],
      intent_ranking: [],
    };
  }
  return nlu.parse(text);
}
