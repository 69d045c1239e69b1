import { Injectable, Logger } from '@nestjs/common';
import { DialogueError, parseForModelRoute, requireUserText } from 'src/core';
import { ServedModel } from 'src/modules/model/served-model';
import { emulate, type EmulationMode, emulationModeParam } from './emulators';

/** Operations on the loaded model (`/model/…`). */
@Injectable()
export class ModelService {
  private readonly logger = new Logger(ModelService.name);
  private readonly parseOptions = { onWarning: (message: string) => this.logger.warn(message) };

  constructor(private readonly assistants: ServedModel) {}

  /**
   * `POST /model/parse`: NLU results only; nothing is stored, no action runs. A CALM assistant
   * answers `commands` as Rasa Pro does (no command generator runs; see parseForModelRoute).
   * A promise only when the pipeline asks a server (DucklingEntityExtractor with a `url`).
   */
  parse(command: ParseCommand): unknown {
    const assistant = this.assistants.require();
    const parsed = parseForModelRoute(assistant, command.text, this.parseOptions);
    return parsed instanceof Promise
      ? parsed.then((p) => emulate(command.emulationMode, p))
      : emulate(command.emulationMode, parsed);
  }
}

/** `POST /model/parse` parsed: the text and the emulation mode. */
export interface ParseCommand {
  readonly text: string;
  readonly emulationMode: EmulationMode | null;
}

/** The body (`{text}`) and `emulation_mode` of `POST /model/parse`, as Rasa checks them. */
export function parseCommand(
  body: unknown,
  emulationMode: unknown,
  maxTextLength: number,
): ParseCommand {
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
  return { text: requireUserText(text, maxTextLength), emulationMode: mode };
}
