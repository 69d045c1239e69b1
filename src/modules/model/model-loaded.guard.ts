import { CanActivate, Injectable } from '@nestjs/common';
import { AssistantSource } from 'src/core';

/**
 * Rasa's `ensure_loaded_agent`: a route that needs the served model answers 409 (`No agent
 * loaded`) before its request is read, so a client without a model learns that first.
 */
@Injectable()
export class ModelLoadedGuard implements CanActivate {
  constructor(private readonly assistants: AssistantSource) {}

  canActivate(): boolean {
    this.assistants.require();
    return true;
  }
}
