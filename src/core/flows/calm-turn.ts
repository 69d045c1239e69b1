import { type Domain } from 'src/core/domain/domain';
import { type DialogueEvent } from 'src/core/events/dialogue-event';
import { type JsonObject } from 'src/core/events/event-base';
import { type DialogueStateTracker } from 'src/core/tracker/dialogue-state-tracker';
import { type ComponentConfig } from 'src/core/training-data/config-reader';
import { NLU_COMMAND_ADAPTER } from './command-generators';
import { commandsFromParseData, processCommands } from './command-processor';
import { type Command } from './commands';
import { type FlowsList } from './flows-list';
import { nluCommands } from './nlu-command-adapter';

/**
 * A generator that needs more than the parse data and the tracker (an LLM): it gets the
 * commands the earlier generators produced and answers its own, with what it showed the LLM.
 */
export interface AsyncCommandGenerator {
  predictCommands(input: {
    readonly text: string;
    readonly parseData: JsonObject;
    readonly tracker: DialogueStateTracker;
    readonly flows: FlowsList;
    readonly existingCommands: readonly Command[];
  }): Promise<{
    readonly commands: readonly Command[];
    readonly flowsInPrompt?: readonly string[];
    readonly flowsFromSemanticSearch?: readonly (readonly [string, number])[];
  }>;
}

/** What the dialogue turn of a CALM assistant needs: its flows and command generators. */
export interface CalmSetup {
  readonly flows: FlowsList;
  /** The pipeline's command generators, in order (`NLUCommandAdapter`, LLM generators). */
  readonly generators: readonly ComponentConfig[];
  /** Built LLM generators, by their index in `generators`. */
  readonly llm?: ReadonlyMap<number, AsyncCommandGenerator>;
}

/**
 * The commands of a new user message, as the pipeline's command generators produce them in
 * order (a generator does nothing once an earlier one produced commands), written into the
 * parse data (`commands`, and `flows_in_prompt` / `flows_from_semantic_search` when an LLM
 * generator ran). Parse data that already carries commands (a `/SetSlots` payload, a client)
 * is kept as it is.
 */
export async function withCommands(
  calm: CalmSetup,
  parseData: JsonObject,
  tracker: DialogueStateTracker,
  domain: Domain,
): Promise<JsonObject> {
  if (commandsFromParseData(parseData).length > 0) return parseData;
  let commands: readonly Command[] = [];
  const extra: JsonObject = {};
  for (const [index, generator] of calm.generators.entries()) {
    if (commands.length > 0) break;
    if (generator.name === NLU_COMMAND_ADAPTER) {
      const max = maxCharactersOf(generator);
      commands = nluCommands({
        parseData,
        tracker,
        flows: calm.flows,
        domain,
        ...(max === undefined ? {} : { maxCharacters: max }),
      });
      continue;
    }
    const llm = calm.llm?.get(index);
    if (llm === undefined) continue;
    const text = typeof parseData.text === 'string' ? parseData.text : '';
    const answer = await llm.predictCommands({
      text,
      parseData,
      tracker,
      flows: calm.flows,
      existingCommands: commands,
    });
    commands = answer.commands;
    if (answer.flowsInPrompt !== undefined) extra.flows_in_prompt = [...answer.flowsInPrompt];
    if (answer.flowsFromSemanticSearch !== undefined) {
      extra.flows_from_semantic_search = answer.flowsFromSemanticSearch.map(([id, score]) => [
        id,
        score,
      ]);
    }
  }
  return { ...parseData, commands: commands.map((c) => ({ ...c })), ...extra };
}

/**
 * After the user event is logged: the command processor's events (slots, stack), to be applied
 * before the first prediction of the turn.
 */
export function commandEvents(
  calm: CalmSetup,
  tracker: DialogueStateTracker,
  domain: Domain,
  now: () => number,
): DialogueEvent[] {
  return processCommands({ tracker, flows: calm.flows, domain, now });
}

/** Whether the latest user message carries commands (then classic slot extraction is skipped). */
export function messageHasCommands(tracker: DialogueStateTracker): boolean {
  return commandsFromParseData(tracker.latestMessage.parseData).length > 0;
}

function maxCharactersOf(config: ComponentConfig): number | undefined {
  const userInput = (config as Record<string, unknown>).user_input;
  if (typeof userInput !== 'object' || userInput === null) return undefined;
  const max = (userInput as Record<string, unknown>).max_characters;
  return typeof max === 'number' ? max : undefined;
}
