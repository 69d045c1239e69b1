import { type JsonObject } from 'src/core/events/event-base';
import { setSlotsPayloadCommands } from 'src/core/flows/nlu-command-adapter';
import { type NluParseOptions } from 'src/core/nlu';
import { type LoadedAssistant } from './assistant-source';
import { type ParseData, parseTextAwaitable } from './parse-text';

/** The NLU result, with `commands` for a CALM assistant (a payload's answer has only the four keys). */
export type ModelParseAnswer = ParseData & { readonly commands?: readonly JsonObject[] };

/**
 * `POST /model/parse`: the NLU result of a text, as Rasa Pro answers it. Rasa Pro parses
 * without a conversation (the agent passes no tracker), and every command generator —
 * `NLUCommandAdapter` and the LLM generators alike — returns no commands without one, so the
 * answer of a CALM assistant carries `commands: []`; only a `/SetSlots(slot=value, …)` button
 * payload, which Rasa Pro reads before the pipeline, carries its `set slot` commands. No
 * command generator runs here, and no `flows_in_prompt` / `flows_from_semantic_search` are
 * added (they come only from an LLM generator run in a conversation). An assistant without
 * flows answers the plain NLU result, as Rasa does. A promise only when the pipeline asks a
 * server (DucklingEntityExtractor with a `url`).
 */
export function parseForModelRoute(
  assistant: LoadedAssistant,
  text: string,
  options: NluParseOptions = {},
): ModelParseAnswer | Promise<ModelParseAnswer> {
  const calm = assistant.calm !== undefined && !assistant.calm.flows.isEmpty;
  const payload = calm ? setSlotsPayloadCommands(text, assistant.domain) : null;
  if (payload !== null) {
    // The payload bypasses the pipeline: no intent, no entities, only its commands.
    const answer = {
      text,
      intent: { name: null, confidence: 0 },
      entities: [],
      commands: payload.map((c) => ({ ...c })),
    };
    return answer as unknown as ModelParseAnswer;
  }
  const parsed = parseTextAwaitable(assistant.nlu, text, options);
  if (!calm) return parsed;
  return parsed instanceof Promise ? parsed.then(withNoCommands) : withNoCommands(parsed);
}

function withNoCommands(parsed: ParseData): ModelParseAnswer {
  const { text: parsedText, intent, entities, ...rest } = parsed;
  return { text: parsedText, intent, entities, commands: [], ...rest } as ModelParseAnswer;
}
