import { type TrainingTracker } from 'src/core/dialogue/story-graph';
import { parseWithRegex } from 'src/core/interpreter/regex-interpreter';
import { type NluParseOptions, type ParseResult, type TrainedNlu } from 'src/core/nlu';

/** What a parse answers: the NLU's ParseResult, or the `/intent{…}` shortcut's data. */
export type ParseData = ParseResult | ReturnType<typeof parseWithRegex>;

/**
 * Parses a user message as Rasa does: text of the form `/intent{"entity": "value"}` bypasses
 * the NLU (RegexMessageHandler); other text runs through the loaded NLU pipeline. Without an
 * NLU (a domain or core-only model) the intent is null with confidence 0.
 */
export function parseText(nlu: TrainedNlu | undefined, text: string): ParseData {
  return bypass(nlu, text) ?? (nlu as TrainedNlu).parse(text);
}

/**
 * `parseText` with every NLU component: a pipeline that asks a server (DucklingEntityExtractor
 * with a `url`) answers a promise; any other parses synchronously, with no promise made. The
 * runtime and `/model/parse` parse with this.
 */
export function parseTextAwaitable(
  nlu: TrainedNlu | undefined,
  text: string,
  options: NluParseOptions = {},
): ParseData | Promise<ParseData> {
  const early = bypass(nlu, text);
  if (early !== null) return early;
  const model = nlu as TrainedNlu;
  return model.needsAsync ? model.parseAsync(text, options) : model.parse(text, options);
}

/**
 * The parse story evaluation (`evaluateStories`, end to end) makes of its user texts: every
 * distinct text of `stories` parsed once, ahead, with every component — a Duckling server is
 * asked, as in a conversation — then answered from that table, synchronously.
 */
export async function storyTextParser(
  nlu: TrainedNlu | undefined,
  stories: readonly TrainingTracker[],
  options: NluParseOptions = {},
): Promise<(text: string) => ParseData> {
  const parsed = new Map<string, ParseData>();
  for (const story of stories) {
    for (const event of story.events) {
      if (event.type !== 'user' || !event.text || parsed.has(event.text)) continue;
      parsed.set(event.text, await parseTextAwaitable(nlu, event.text, options));
    }
  }
  return (text) => parsed.get(text) ?? parseText(nlu, text);
}

/** The `/intent{…}` shortcut, or the empty parse without an NLU; null: the NLU parses. */
function bypass(nlu: TrainedNlu | undefined, text: string): ParseData | null {
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
  return null;
}
