import { type MessageHandler, type UserMessage } from 'src/core';

/** Where a channel logs a turn that failed (a Nest Logger fits). */
export interface InputLog {
  warn(context: Record<string, unknown>, message: string): void;
}

export interface ChannelInputOptions {
  /** The channel serving the request (`rest`, `callback`, `socketio`, a custom name, `genesys`). */
  readonly channel: string;
  /** Where a failed turn is logged; null when the channel reports failures itself (voice). */
  readonly log: InputLog | null;
}

/**
 * The one input contract of every channel: a channel reads sender, text, metadata and its
 * output channel from its request (webhook-input.ts for JSON webhook bodies), builds a
 * `UserMessage`, and hands it to the `MessageHandler` through this class, never directly.
 *
 * - The rules hold for every message: the sender follows the conversation id rules and the text
 *   is at most PARLEY_MAX_TEXT_LENGTH characters. The runtime (the MessageHandler) refuses a
 *   message that breaks them with a `REQUEST.INVALID_PARAMETER` failure and stores nothing;
 *   channels check earlier where they can name the field better (the body's `sender`, …).
 * - A turn that fails was not stored: it is logged (unless the channel logs it itself) and the
 *   error is rethrown, so the channel answers a failure body (503 while the database is
 *   unreachable) instead of a success.
 */
export class ChannelInput implements MessageHandler {
  constructor(
    private readonly handler: MessageHandler,
    private readonly options: ChannelInputOptions,
  ) {}

  get channel(): string {
    return this.options.channel;
  }

  async handleMessage(message: UserMessage): Promise<void> {
    try {
      await this.handler.handleMessage(message);
    } catch (e) {
      this.options.log?.warn(
        { channel: this.options.channel, sender: message.senderId, err: (e as Error).message },
        'the user message could not be handled; the turn was not stored',
      );
      throw e;
    }
  }
}
