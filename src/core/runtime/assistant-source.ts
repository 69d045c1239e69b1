import { type Domain } from 'src/core/domain/domain';
import { DialogueError } from 'src/core/errors/dialogue-error';
import { type CalmSetup } from 'src/core/flows/calm-turn';
import { type TrainedNlu } from 'src/core/nlu';
import { type PolicyEnsemble } from 'src/core/policies/policy-ensemble';

/** What the server is serving right now: the domain and the identity of the model behind it. */
export interface LoadedAssistant {
  readonly domain: Domain;
  readonly modelId: string;
  /** Basename of the model archive, or null for a domain loaded without a model. */
  readonly modelFile: string | null;
  readonly assistantId: string | null;
  /** The trained NLU of the model; absent for a domain or a core-only model. */
  readonly nlu?: TrainedNlu;
  /** The NLU example texts the model was trained on (`nlu/phrases.json`); absent before. */
  readonly phrases?: readonly string[];
  /** The trained dialogue policies; absent for a domain or an NLU-only model. */
  readonly policies?: PolicyEnsemble;
  /** Flows and command generators (Rasa Pro CALM); absent for an assistant without flows. */
  readonly calm?: CalmSetup;
}

/**
 * Port: the assistant being served (the loaded model). The runtime reads it at the start of
 * every turn, so a model swapped in between turns is used from the next turn on.
 */
export abstract class AssistantSource {
  /** The loaded assistant, or null before a model is loaded. */
  abstract current(): LoadedAssistant | null;

  /** The loaded assistant, or the 409 failure Rasa gives without an agent. */
  require(): LoadedAssistant {
    const loaded = this.current();
    if (loaded === null) {
      throw new DialogueError(
        'MODEL.NOT_LOADED',
        'No agent loaded. To continue processing, a model of a trained agent needs to be loaded.',
      );
    }
    return loaded;
  }
}
