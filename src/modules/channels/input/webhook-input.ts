import {
  DEFAULT_MAX_TEXT_LENGTH,
  DialogueError,
  type JsonObject,
  requireConversationId,
  requireUserText,
} from 'src/core';
import { messageIdOf } from 'src/modules/idempotency';

/** The fields of a REST-style webhook body (`{sender, message, metadata?, input_channel?}`). */
export interface WebhookInput {
  readonly sender: string;
  readonly message: string;
  readonly metadata: JsonObject | null;
  /** `input_channel` override from the body, if any. */
  readonly inputChannel: string | null;
  /** `stream: true` in the body. */
  readonly stream: boolean;
  /** `message_id` of the body: the user event's id and, without a header, the idempotency key. */
  readonly messageId: string | null;
}

function bad(channel: string, message: string, field: string): DialogueError {
  return new DialogueError('REQUEST.INVALID_PARAMETER', message, {
    channel,
    parameter: field,
    in: 'body',
  });
}

/**
 * Validates the JSON body of `POST /webhooks/<channel>/webhook` (callback and custom channels): `sender` (string, or a number
 * which becomes a string; it must follow the conversation id rules) and `message` (string of at
 * most `maxTextLength` characters) are required; `metadata` is an object when given;
 * `input_channel` a string; `stream` a boolean. Anything else is a 400 naming the field.
 */
export function parseWebhookBody(
  body: unknown,
  channel: string,
  maxTextLength = DEFAULT_MAX_TEXT_LENGTH,
): WebhookInput {
  if (body === undefined || body === null || body === '') {
    throw new DialogueError(
      'REQUEST.BODY_MISSING',
      `The ${channel} webhook needs a JSON body {"sender": "...", "message": "..."}.`,
      { channel },
    );
  }
  if (typeof body !== 'object' || Array.isArray(body)) {
    throw bad(
      channel,
      `The ${channel} webhook body must be a JSON object with "sender" and "message".`,
      'body',
    );
  }
  const b = body as Record<string, unknown>;
  let sender: string;
  if (typeof b.sender === 'string' && b.sender.length > 0) sender = b.sender;
  else if (typeof b.sender === 'number' && Number.isFinite(b.sender)) sender = String(b.sender);
  else if (b.sender === undefined || b.sender === null || b.sender === '') {
    throw bad(
      channel,
      `"sender" is missing: the ${channel} webhook needs the sender's id.`,
      'sender',
    );
  } else {
    throw bad(channel, `"sender" must be a string, got ${typeOf(b.sender)}.`, 'sender');
  }
  if (b.message === undefined || b.message === null) {
    throw bad(
      channel,
      `"message" is missing: the ${channel} webhook needs the user's text.`,
      'message',
    );
  }
  if (typeof b.message !== 'string') {
    throw bad(channel, `"message" must be a string, got ${typeOf(b.message)}.`, 'message');
  }
  let metadata: JsonObject | null = null;
  if (b.metadata !== undefined && b.metadata !== null) {
    if (typeof b.metadata !== 'object' || Array.isArray(b.metadata)) {
      throw bad(channel, `"metadata" must be an object, got ${typeOf(b.metadata)}.`, 'metadata');
    }
    metadata = b.metadata as JsonObject;
  }
  let inputChannel: string | null = null;
  if (b.input_channel !== undefined && b.input_channel !== null) {
    if (typeof b.input_channel !== 'string') {
      throw bad(
        channel,
        `"input_channel" must be a string, got ${typeOf(b.input_channel)}.`,
        'input_channel',
      );
    }
    inputChannel = b.input_channel;
  }
  if (b.stream !== undefined && b.stream !== null && typeof b.stream !== 'boolean') {
    throw bad(channel, `"stream" must be true or false, got ${typeOf(b.stream)}.`, 'stream');
  }
  return {
    sender: requireConversationId(sender, 'sender', 'body'),
    message: requireUserText(b.message.trim(), maxTextLength, 'message'),
    metadata,
    inputChannel,
    stream: b.stream === true,
    messageId: messageIdOf(b),
  };
}

/**
 * Validates the JSON body of the REST channel's `POST /webhooks/rest/webhook`, with that route's
 * own failure messages: `sender` (a string or number following the conversation id rules) and
 * `message` (at most `maxTextLength` characters, stripped) are required; `metadata` is an object
 * and `input_channel` a string when given. The REST channel reads `stream` from the query.
 */
export function parseRestWebhookBody(
  body: unknown,
  maxTextLength: number,
): Omit<WebhookInput, 'stream'> {
  const bad = (parameter: string, message: string): DialogueError =>
    new DialogueError('REQUEST.INVALID_PARAMETER', message, { parameter, in: 'body' });
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw bad('body', 'The request body must be a JSON object with "sender" and "message".');
  }
  const b = body as Record<string, unknown>;
  if (b.sender === undefined || b.sender === null || b.sender === '') {
    throw bad('sender', 'The request body needs a "sender" (the conversation id).');
  }
  if (typeof b.sender !== 'string' && typeof b.sender !== 'number') {
    throw bad('sender', '"sender" must be a string.');
  }
  if (typeof b.message !== 'string') {
    throw bad('message', 'The request body needs a "message" (text).');
  }
  if (
    b.metadata !== undefined &&
    b.metadata !== null &&
    (typeof b.metadata !== 'object' || Array.isArray(b.metadata))
  ) {
    throw bad('metadata', '"metadata" must be an object.');
  }
  if (
    b.input_channel !== undefined &&
    b.input_channel !== null &&
    typeof b.input_channel !== 'string'
  ) {
    throw bad('input_channel', '"input_channel" must be a string.');
  }
  return {
    sender: requireConversationId(String(b.sender), 'sender', 'body'),
    message: requireUserText(b.message.trim(), maxTextLength, 'message'),
    metadata: (b.metadata as JsonObject | undefined) ?? null,
    inputChannel: typeof b.input_channel === 'string' ? b.input_channel : null,
    messageId: messageIdOf(b),
  };
}

function typeOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}
