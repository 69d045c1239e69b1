import {
  type AddMessageCommand,
  type AppendEventsCommand,
  DialogueError,
  type EventVerbosity,
  type ExecuteActionCommand,
  type JsonObject,
  type OutputChannelName,
  type ReplaceEventsCommand,
  requireUserEventTexts,
  requireUserText,
  type TriggerIntentCommand,
  validateEventsPayload,
} from 'src/core';
import { messageIdOf } from 'src/modules/idempotency';
import { verbosityParam } from './query-params';

/**
 * Request bodies and query parameters of the conversation routes, parsed into the runtime's
 * typed commands before any service sees them. Each parser answers Rasa's 400 (its message
 * where Rasa has one) for what does not parse.
 */

/**
 * The conversation (its id checked) and the raw query parameters the routes share; each parser
 * reads them in the order Rasa checks them (the body first, then `include_events`).
 */
export interface ConversationParams {
  readonly conversationId: string;
  readonly includeEvents: unknown;
  readonly outputChannel: unknown;
}

function shared(params: ConversationParams): {
  conversationId: string;
  verbosity: EventVerbosity;
  outputChannel: OutputChannelName;
} {
  return {
    conversationId: params.conversationId,
    verbosity: verbosityParam(params.includeEvents),
    outputChannel: outputChannelParam(params.outputChannel),
  };
}

/** `output_channel`: a name, `latest`, or absent (collect the messages in the answer). */
export function outputChannelParam(value: unknown): OutputChannelName {
  const v: unknown = Array.isArray(value) ? (value as unknown[])[value.length - 1] : value;
  return typeof v === 'string' && v !== '' ? v : null;
}

/** `POST /conversations/{id}/trigger_intent`'s body: `{name, entities?}`. */
export function triggerIntentCommand(
  params: ConversationParams,
  body: unknown,
  maxTextLength: number,
): TriggerIntentCommand {
  const b = objectBody(body);
  const intent = requiredName(b, 'intent');
  const entities = entityList(b.entities);
  // The entities stand in for the user's text: the same bound applies to their JSON.
  requireUserText(JSON.stringify(entities), maxTextLength, 'entities');
  return { ...shared(params), intent, entities };
}

/** `POST /conversations/{id}/execute`'s body: `{name, policy?, confidence?}`. */
export function executeActionCommand(
  params: ConversationParams,
  body: unknown,
): ExecuteActionCommand {
  const b = objectBody(body);
  const action = requiredName(b, 'action');
  // The `action` event's schema (Rasa's EVENTS_SCHEMA, as the replace-events route checks it):
  // `policy` a string or null, `confidence` a number or null.
  const policy = optionalField(b, 'policy', 'string');
  const confidence = optionalField(b, 'confidence', 'number');
  return { ...shared(params), action, policy, confidence };
}

/** `POST /conversations/{id}/tracker/events`'s body: one event or a list of events, checked against Rasa's event schema. */
export function appendEventsCommand(
  params: ConversationParams,
  body: unknown,
  executeSideEffects: boolean,
  maxTextLength: number,
): AppendEventsCommand {
  const events = checkedEvents(body, maxTextLength);
  return { ...shared(params), events, executeSideEffects };
}

/** `PUT /conversations/{id}/tracker/events`'s body: a list of events, checked against Rasa's event schema. */
export function replaceEventsCommand(
  params: ConversationParams,
  body: unknown,
  maxTextLength: number,
): ReplaceEventsCommand {
  if (body !== undefined && !Array.isArray(body)) {
    throw new DialogueError(
      'EVENTS.INVALID',
      'Failed to validate the events format. For more information about the format visit the docs. Error: the body of a replace must be a list of events.',
    );
  }
  const events = checkedEvents(body, maxTextLength);
  const { conversationId, verbosity } = shared(params);
  return { conversationId, verbosity, events };
}

/** `POST /conversations/{id}/messages`'s body: `{text, sender: "user", parse_data?}`. */
export function addMessageCommand(
  params: ConversationParams,
  body: unknown,
  maxTextLength: number,
): AddMessageCommand {
  if (
    body === undefined ||
    body === null ||
    (typeof body === 'object' && Object.keys(body).length === 0)
  ) {
    throw new DialogueError(
      'REQUEST.BODY_MISSING',
      'No message defined in request body. Add a message to the request body in order to add it to the tracker.',
    );
  }
  const { conversationId, verbosity } = shared(params);
  if (typeof body !== 'object' || Array.isArray(body)) {
    throw new DialogueError(
      'REQUEST.INVALID_PARAMETER',
      'The request body must be a JSON object with "text" and "sender".',
      { parameter: 'body', in: 'body' },
    );
  }
  const b = body as Record<string, unknown>;
  if (b.sender !== 'user') {
    throw new DialogueError(
      'REQUEST.INVALID_PARAMETER',
      `Currently, only user messages can be passed to this endpoint. Messages of sender '${String(b.sender)}' cannot be handled.`,
      { parameter: 'sender', in: 'body' },
    );
  }
  if (typeof b.text !== 'string') {
    throw new DialogueError('REQUEST.INVALID_PARAMETER', 'The message "text" must be a string.', {
      parameter: 'text',
      in: 'body',
    });
  }
  if (
    b.parse_data !== undefined &&
    (typeof b.parse_data !== 'object' || b.parse_data === null || Array.isArray(b.parse_data))
  ) {
    throw new DialogueError('REQUEST.INVALID_PARAMETER', '"parse_data" must be an object.', {
      parameter: 'parse_data',
      in: 'body',
    });
  }
  requireUserText(b.text, maxTextLength);
  return {
    conversationId,
    verbosity,
    text: b.text,
    parseData: (b.parse_data as JsonObject | undefined) ?? null,
    messageId: messageIdOf(b),
  };
}

/** Events checked against Rasa's event schema, with every user text within the bound. */
export function checkedEvents(body: unknown, maxTextLength: number): Record<string, unknown>[] {
  const result = validateEventsPayload(body);
  if (!result.ok) throw new DialogueError('EVENTS.INVALID', result.message);
  requireUserEventTexts(result.events, maxTextLength);
  return result.events;
}

/** `b.name` as a non-empty string, else Rasa's "Name of the <kind> not provided" failure. */
function requiredName(b: Record<string, unknown>, kind: 'intent' | 'action'): string {
  const name = b.name;
  if (typeof name !== 'string' || name === '') {
    throw new DialogueError(
      'REQUEST.INVALID_PARAMETER',
      `Name of the ${kind} not provided in request body.`,
      { parameter: 'name', in: 'body' },
    );
  }
  return name;
}

/** `b[key]` when it is of `type`, null when absent or null; any other value is a 400. */
function optionalField<T extends 'string' | 'number'>(
  b: Record<string, unknown>,
  key: string,
  type: T,
): (T extends 'string' ? string : number) | null {
  const value = b[key];
  if (value === undefined || value === null) return null;
  if (typeof value !== type || (type === 'number' && !Number.isFinite(value))) {
    throw new DialogueError(
      'REQUEST.INVALID_PARAMETER',
      `"${key}" must be a ${type === 'number' ? 'number' : 'string'} or null.`,
      { parameter: key, in: 'body' },
    );
  }
  return value as T extends 'string' ? string : number;
}

function objectBody(body: unknown): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new DialogueError(
      'REQUEST.INVALID_PARAMETER',
      'The request body must be a JSON object.',
      {
        parameter: 'body',
        in: 'body',
      },
    );
  }
  return body as Record<string, unknown>;
}

function entityList(value: unknown): JsonObject[] {
  if (value === undefined || value === null) return [];
  if (Array.isArray(value)) {
    // Each listed entity as the `user` event's entity schema has it: an `entity` name and a value.
    if (
      !value.every(
        (e) =>
          typeof e === 'object' &&
          e !== null &&
          !Array.isArray(e) &&
          typeof (e as JsonObject).entity === 'string' &&
          'value' in e,
      )
    ) {
      throw new DialogueError(
        'REQUEST.INVALID_PARAMETER',
        '"entities" must be an object or a list of entity objects ({"entity": name, "value": value}).',
        { parameter: 'entities', in: 'body' },
      );
    }
    return value as JsonObject[];
  }
  if (typeof value === 'object') {
    return Object.entries(value as JsonObject).map(([entity, v]) => ({ entity, value: v }));
  }
  throw new DialogueError(
    'REQUEST.INVALID_PARAMETER',
    '"entities" must be an object or a list of entity objects.',
    { parameter: 'entities', in: 'body' },
  );
}
