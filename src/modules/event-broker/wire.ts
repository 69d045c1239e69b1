import * as crypto from 'node:crypto';
import { type OutboxEvent } from 'src/modules/tracker';

/** One event ready for a broker. */
export interface BrokerMessage {
  readonly conversationId: string;
  readonly seq: number;
  /** Stable id: the same for every publication of the same stored event (dedupe key). */
  readonly eventId: string;
  /** Rasa's flat shape as JSON: `{"sender_id": …, …event}`. */
  readonly body: string;
}

/**
 * Node's one-shot digest (`crypto.hash`, in every Node the project supports but not in the
 * typings it uses): about a third of the CPU of createHash → update → digest for a short input.
 */
const oneShotHash = (
  crypto as unknown as {
    hash: (algorithm: string, data: string, outputEncoding: 'buffer') => Buffer;
  }
).hash;

/**
 * A deterministic UUID (version 5 layout, SHA-1) of a stored event: conversation id, the
 * conversation row's generation (a re-created conversation reuses seq numbers) and seq. A relay
 * retry or `parley export` of the same event yields the same id.
 */
export function eventIdOf(conversationId: string, generation: string, seq: number): string {
  const h = oneShotHash('sha1', `${conversationId}\u0000${generation}\u0000${seq}`, 'buffer');
  h[6] = ((h[6] as number) & 0x0f) | 0x50;
  h[8] = ((h[8] as number) & 0x3f) | 0x80;
  const x = h.subarray(0, 16).toString('hex');
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20)}`;
}

/**
 * The message of a stored event in Rasa's legacy flat shape: `sender_id` first, then the event
 * exactly as the tracker API serialises it (float-second timestamps, `metadata.model_id` /
 * `assistant_id` as stored), with `event_id` and `seq` added inside `metadata` — a key legacy
 * consumers (Rasa Analytics, Studio) do not interpret.
 *
 * The stored text is JSON.stringify's output, so the message is spliced from it rather than
 * parsed and written again (a third of the relay's CPU per event); a stored event the splice
 * cannot reproduce exactly (see `splicedBody`) takes the parse.
 */
export function toBrokerMessage(event: OutboxEvent): BrokerMessage {
  const eventId = eventIdOf(event.conversationId, event.generation, event.seq);
  const body =
    splicedBody(event.data, event.conversationId, eventId, event.seq) ??
    parsedBody(event.data, event.conversationId, eventId, event.seq);
  return { conversationId: event.conversationId, seq: event.seq, eventId, body };
}

/** The flat shape built from the parsed event: the definition `splicedBody` reproduces. */
function parsedBody(data: string, senderId: string, eventId: string, seq: number): string {
  const parsed = JSON.parse(data) as Record<string, unknown>;
  const metadata =
    typeof parsed.metadata === 'object' &&
    parsed.metadata !== null &&
    !Array.isArray(parsed.metadata)
      ? (parsed.metadata as Record<string, unknown>)
      : {};
  return JSON.stringify({
    sender_id: senderId,
    ...parsed,
    metadata: { ...metadata, event_id: eventId, seq },
  });
}

/** A key JavaScript objects list first whatever their insertion order (an array index). */
const INDEX_KEY = /^(0|[1-9]\d*)$/;

/**
 * parsedBody's text, spliced: `{"sender_id":…,` before the stored members, `"event_id"` and
 * `"seq"` appended to the stored `metadata` object (or a `metadata` member appended when there
 * is none). Null, for the parse to handle, when the result could differ from parsedBody's: the
 * text is not a plain JSON object, a top-level key is `sender_id`, an array index (listed
 * before `sender_id` once parsed) or escaped, `metadata` is not an object, or the metadata
 * text mentions `event_id` or `seq` (a key the spread would overwrite in place).
 */
function splicedBody(data: string, senderId: string, eventId: string, seq: number): string | null {
  const n = data.length;
  if (n < 2 || data.charCodeAt(0) !== 0x7b || data.charCodeAt(n - 1) !== 0x7d) return null;
  let metadataStart = -1;
  let metadataEnd = -1; // index of the metadata object's closing brace
  let i = 1;
  if (data.charCodeAt(i) !== 0x7d) {
    for (;;) {
      if (data.charCodeAt(i) !== 0x22) return null;
      const keyEnd = data.indexOf('"', i + 1);
      if (keyEnd < 0) return null;
      const key = data.slice(i + 1, keyEnd);
      if (key.includes('\\') || key === 'sender_id' || INDEX_KEY.test(key)) return null;
      if (data.charCodeAt(keyEnd + 1) !== 0x3a) return null;
      const valueStart = keyEnd + 2;
      const valueEnd = skipValue(data, valueStart);
      if (valueEnd < 0) return null;
      if (key === 'metadata') {
        if (data.charCodeAt(valueStart) !== 0x7b) return null;
        metadataStart = valueStart;
        metadataEnd = valueEnd - 1;
      }
      const next = data.charCodeAt(valueEnd);
      if (next === 0x7d && valueEnd === n - 1) break;
      if (next !== 0x2c) return null;
      i = valueEnd + 1;
    }
  }
  const head = `{"sender_id":${JSON.stringify(senderId)}`;
  const ids = `"event_id":"${eventId}","seq":${seq}`;
  if (metadataStart < 0) {
    const members = n > 2 ? `,${data.slice(1, n - 1)}` : '';
    return `${head}${members},"metadata":{${ids}}}`;
  }
  const metadata = data.slice(metadataStart, metadataEnd);
  if (metadata.includes('"event_id"') || metadata.includes('"seq"')) return null;
  const separator = metadataEnd === metadataStart + 1 ? '' : ',';
  return `${head},${data.slice(1, metadataEnd)}${separator}${ids}${data.slice(metadataEnd)}`;
}

/**
 * The index after the JSON value starting at `start` of JSON.stringify's output, or -1 when
 * the text ends first or has white space outside strings (another writer's JSON). Strings are
 * skipped with their escapes; objects and arrays by counting brackets outside strings.
 */
function skipValue(text: string, start: number): number {
  const n = text.length;
  let depth = 0;
  for (let i = start; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      i = endOfString(text, i);
      if (i < 0) return -1;
      if (depth === 0) return i + 1;
    } else if (c === 0x7b || c === 0x5b) {
      depth++;
    } else if (c === 0x7d || c === 0x5d) {
      if (depth === 0) return i; // the end of a number, literal or nothing before it
      depth--;
      if (depth === 0) return i + 1;
    } else if (c === 0x2c && depth === 0) {
      return i;
    } else if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) {
      return -1; // not JSON.stringify's output: the parse writes it without the white space
    }
  }
  return depth === 0 ? n : -1;
}

/** The index of the quote closing the string opened at `open`, or -1. */
function endOfString(text: string, open: number): number {
  let i = open + 1;
  for (;;) {
    const close = text.indexOf('"', i);
    if (close < 0) return -1;
    let backslashes = 0;
    for (let j = close - 1; j > open && text.charCodeAt(j) === 0x5c; j--) backslashes++;
    if (backslashes % 2 === 0) return close;
    i = close + 1;
  }
}

/** `RASA_ENVIRONMENT` as Rasa sends it (Kafka header; RabbitMQ `app_id` when set). */
export function rasaEnvironment(): string | null {
  const value = process.env.RASA_ENVIRONMENT;
  return value === undefined || value === '' ? null : value;
}
