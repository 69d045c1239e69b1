import { Injectable } from '@nestjs/common';
import { DialogueError, type Domain } from 'src/core';
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
}

/**
 * The Domain port: holds the loaded assistant. The model store fills it from a model archive;
 * without a model, a domain file (`--domain`) or a test fills it. Routes that need an
 * assistant answer 409 while it is empty, as Rasa does without an agent.
 */
@Injectable()
export class AssistantRegistry {
  private loaded: LoadedAssistant | null = null;

  current(): LoadedAssistant | null {
    return this.loaded;
  }

  /** The loaded assistant, or the 409 `Conflict` failure Rasa gives without an agent. */
  require(): LoadedAssistant {
    if (this.loaded === null) {
      throw new DialogueError(
        'MODEL.NOT_LOADED',
        'No agent loaded. To continue processing, a model of a trained agent needs to be loaded.',
      );
    }
    return this.loaded;
  }

  load(assistant: LoadedAssistant): void {
    this.loaded = assistant;
  }

  unload(): void {
    this.loaded = null;
  }
}
