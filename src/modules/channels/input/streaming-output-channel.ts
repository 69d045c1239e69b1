import type { Response } from 'express';
import { type BotMessage, CollectingOutputChannel } from 'src/core';

/**
 * The stream mode of a webhook (`?stream=true`, or `stream: true` in a custom channel's body):
 * each bot message is written to the response as one JSON line as soon as it is sent, and not
 * kept. The caller sets status and content type first; headers go out with the first message,
 * which is sent only after the turn is stored, so a turn that fails still gets its failure status.
 */
export class StreamingOutputChannel extends CollectingOutputChannel {
  constructor(
    private readonly res: Response,
    name?: string,
  ) {
    super(name);
  }

  override async send(recipientId: string, message: BotMessage): Promise<void> {
    await super.send(recipientId, message);
    const collected = this.messages.pop();
    if (collected !== undefined) this.res.write(`${JSON.stringify(collected)}\n`);
  }
}
