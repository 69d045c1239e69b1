import { Logger } from '@nestjs/common';
import { type BotMessage, CollectingOutputChannel, type JsonObject } from 'src/core';
import { type CallbackEndpoint } from './callback-config';

/**
 * Rasa's CallbackOutput: collects each bot message like the collecting channel and POSTs it,
 * as JSON (`{recipient_id, text?, image?, buttons?, ...}`), to the configured URL, one request
 * per message in order. A failing callback is logged; the turn goes on.
 */
export class CallbackOutputChannel extends CollectingOutputChannel {
  private static readonly log = new Logger('CallbackChannel');

  constructor(private readonly endpoint: CallbackEndpoint) {
    super('callback');
  }

  override async send(recipientId: string, message: BotMessage): Promise<void> {
    await super.send(recipientId, message);
    const collected = this.messages[this.messages.length - 1];
    if (collected !== undefined) await this.post(collected);
  }

  private async post(message: JsonObject): Promise<void> {
    const url = new URL(this.endpoint.url);
    for (const [k, v] of Object.entries(this.endpoint.params)) url.searchParams.set(k, v);
    const headers: Record<string, string> = {
      ...this.endpoint.headers,
      'content-type': 'application/json',
    };
    if (this.endpoint.basicAuth !== null) {
      const { username, password } = this.endpoint.basicAuth;
      headers.authorization = `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`;
    }
    try {
      const res = await fetch(url, {
        method: 'POST',
        headers,
        body: JSON.stringify(message),
        signal: AbortSignal.timeout(this.endpoint.timeoutMs),
      });
      if (!res.ok) {
        const body = await res.text().catch(() => '');
        CallbackOutputChannel.log.error(
          { url: this.endpoint.url, status: res.status, response: body.slice(0, 500) },
          'Failed to send output message to callback',
        );
      } else {
        await res.body?.cancel().catch(() => undefined);
      }
    } catch (e) {
      CallbackOutputChannel.log.error(
        { url: this.endpoint.url, err: (e as Error).message },
        'Failed to send output message to callback',
      );
    }
  }
}
