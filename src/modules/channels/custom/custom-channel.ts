import { type JsonObject, type OutputChannel } from 'src/core';

/**
 * The parts of one HTTP request a custom channel sees (its webhook or health route).
 * `body` is the parsed JSON body (or the raw text when it is not JSON; undefined when empty).
 */
export interface ChannelRequest {
  readonly method: string;
  readonly path: string;
  readonly body: unknown;
  readonly query: Readonly<Record<string, unknown>>;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
}

/** The result of one webhook turn, handed to `CustomChannel.respond`. */
export interface ChannelTurn {
  /** The bot messages of the turn (`{recipient_id, text?, image?, buttons?, ...}`). */
  readonly messages: JsonObject[];
  /** The metadata the message came with (`{}` when none). */
  readonly metadata: JsonObject;
  readonly conversationId: string;
  /**
   * The conversation's tracker after the turn (as `GET /conversations/<id>/tracker`); null while
   * no model is loaded (the message is then ignored, as in Rasa).
   */
  readonly trackerState: Record<string, unknown> | null;
}

/**
 * A custom input channel — Parley's counterpart of a Rasa `InputChannel` (usually a `RestInput`
 * subclass). Listed in `credentials.yml` as `<module-path>.<ClassName>: {settings}`; Parley loads
 * the module (relative to the working directory, like Rasa's Python path) and builds the channel
 * with `ClassName.fromCredentials(settings)` when that static method exists, else
 * `new ClassName(settings)`. It then serves:
 *
 * - `GET  /webhooks/<name>/` → `health()` (default `{"status": "ok"}`),
 * - `POST /webhooks/<name>/webhook` → reads sender / text / metadata with the `extract*` methods
 *   (defaults: the REST body `{sender, message, metadata?, input_channel?}`, validated — a bad
 *   body is a 400 failure body — unless the channel has both `extractSender` and
 *   `extractMessage`), runs the turn, and answers `respond(turn)`; by default
 *   `{messages, metadata, conversation_id, tracker_state}`. With `stream: true` in the body (or
 *   `?stream=true`) the messages are streamed as they are produced, one JSON object per line.
 *
 * Every method is optional except `name`. Methods may throw; the error becomes a failure body.
 */
export interface CustomChannel {
  /** URL segment and `input_channel` name: `/webhooks/<name>/webhook`. Letters, digits, `_`, `-`. */
  readonly name: string | (() => string);
  /** The sender id (conversation id) of a webhook request. */
  extractSender?(request: ChannelRequest): string | Promise<string>;
  /** The user's text of a webhook request. */
  extractMessage?(request: ChannelRequest): string | Promise<string>;
  /** Metadata stored with the user message (Rasa's `get_metadata`). */
  getMetadata?(request: ChannelRequest): JsonObject | null | Promise<JsonObject | null>;
  /**
   * Where the bot's answers go. Default: collected and returned by `respond`. Also used for
   * `output_channel=<name>` on the tracker routes (Rasa's `get_output_channel`).
   */
  getOutputChannel?(): OutputChannel | null;
  /** The webhook's JSON response (may be a promise). A failed turn is logged, not thrown. */
  respond?(turn: ChannelTurn, request: ChannelRequest): unknown;
  /** The health route's JSON response (may be a promise). */
  health?(): unknown;
}

/** What a `credentials.yml` key names: a class building a CustomChannel from its settings. */
export interface CustomChannelClass {
  new (settings: Readonly<Record<string, unknown>> | null): CustomChannel;
  fromCredentials?(settings: Readonly<Record<string, unknown>> | null): CustomChannel;
}

/** The channel's name, whether given as a property or as Rasa's `name()` method. */
export function channelName(channel: CustomChannel): string {
  return typeof channel.name === 'function' ? channel.name() : channel.name;
}
