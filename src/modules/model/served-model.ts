import { Injectable } from '@nestjs/common';
import { AssistantSource, type LoadedAssistant } from 'src/core';

/**
 * The served model behind the AssistantSource port: the model store fills it from an archive,
 * the `--domain` file fills it at start, or a test fills it directly. Routes that need an
 * assistant answer 409 while it is empty, as Rasa does without an agent.
 */
@Injectable()
export class ServedModel extends AssistantSource {
  private loaded: LoadedAssistant | null = null;

  current(): LoadedAssistant | null {
    return this.loaded;
  }

  load(assistant: LoadedAssistant): void {
    this.loaded = assistant;
  }

  unload(): void {
    this.loaded = null;
  }
}
