import { Inject, Injectable } from '@nestjs/common';
import { DialogueError, parseText, requireUserText } from 'src/core';
import { ServedModel } from 'src/modules/model/served-model';
import { APP_CONFIG, type AppConfig } from 'src/platform/config/app-config';
import { emulate, emulationModeParam } from './emulators';

/** Operations on the loaded model (`/model/…`). */
@Injectable()
export class ModelService {
  constructor(
    private readonly assistants: ServedModel,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** Op 12 (`POST /model/parse`): NLU results only; nothing is stored, no action runs. */
  parse(body: unknown, emulationMode: unknown): unknown {
    const assistant = this.assistants.require();
    const mode = emulationModeParam(emulationMode);
    if (
      body === undefined ||
      body === null ||
      typeof body !== 'object' ||
      Array.isArray(body) ||
      Object.keys(body).length === 0
    ) {
      throw new DialogueError(
        'REQUEST.BODY_MISSING',
        'No text message defined in request_body. Add text message to request body in order to obtain the intent and extracted entities.',
      );
    }
    let text: unknown = (body as Record<string, unknown>).text;
    if (Array.isArray(text)) text = text[0];
    if (typeof text !== 'string') {
      throw new DialogueError(
        'REQUEST.INVALID_PARAMETER',
        "The request body must contain 'text' as a string.",
        { parameter: 'text', in: 'body' },
      );
    }
    requireUserText(text, this.config.http.maxTextLength);
    return emulate(mode, parseText(assistant.nlu, text));
  }
}
