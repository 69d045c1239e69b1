import { type BotMessage, type JsonObject, OutputChannel } from 'src/core';

/** The part of a socket.io server (or namespace) the output channel needs. */
export interface SocketEmitter {
  to(room: string): { emit(event: string, ...args: unknown[]): boolean };
}

/**
 * Rasa's SocketIOOutput: every bot message is emitted as `bot_message_evt` to the recipient's
 * room (the socket id, or the session id with `session_persistence`), in the shape the
 * `rasa-webchat` widget renders: text split on blank lines; buttons and quick replies become
 * `quick_replies` of `{content_type: "text", title, payload}` on the last text part; an image
 * becomes `{attachment: {type: "image", payload: {src}}}`, each element a generic template. A
 * custom payload is emitted as it is; with a `data` key, `data` is emitted (to `room` when it
 * names one), as Rasa's `sio.emit(**custom)` does.
 */
export class SocketIoOutputChannel extends OutputChannel {
  readonly name = 'socketio';

  constructor(
    private readonly emitter: SocketEmitter,
    private readonly botMessageEvt: string,
  ) {
    super();
  }

  /** Rasa's `_send_message`: one emission to the recipient's room. */
  send(recipientId: string, message: BotMessage): Promise<void> {
    this.emitter.to(recipientId).emit(this.botMessageEvt, message);
    return Promise.resolve();
  }

  override async sendTextMessage(recipientId: string, text: string): Promise<void> {
    for (const part of text.trim().split('\n\n')) await this.send(recipientId, { text: part });
  }

  override sendImageUrl(recipientId: string, image: unknown): Promise<void> {
    return this.send(recipientId, {
      attachment: { type: 'image', payload: { src: image as string } },
    });
  }

  override async sendTextWithButtons(
    recipientId: string,
    text: string | null,
    buttons: readonly unknown[],
  ): Promise<void> {
    const parts = (text ?? '').trim().split('\n\n');
    const messages: JsonObject[] = parts.map((part) => ({ text: part, quick_replies: [] }));
    const last = messages[messages.length - 1] as JsonObject;
    last.quick_replies = buttons.map((b) => {
      const button = (b ?? {}) as JsonObject;
      return { content_type: 'text', title: button.title, payload: button.payload };
    });
    for (const m of messages) await this.send(recipientId, m);
  }

  override async sendElements(recipientId: string, elements: readonly unknown[]): Promise<void> {
    for (const element of elements) {
      await this.send(recipientId, {
        attachment: {
          type: 'template',
          payload: { template_type: 'generic', elements: element as JsonObject },
        },
      });
    }
  }

  override sendCustomJson(recipientId: string, custom: unknown): Promise<void> {
    if (typeof custom === 'object' && custom !== null && !Array.isArray(custom)) {
      const c = custom as JsonObject;
      if ('data' in c) {
        const room = typeof c.room === 'string' ? c.room : recipientId;
        this.emitter.to(room).emit(this.botMessageEvt, c.data);
        return Promise.resolve();
      }
    }
    return this.send(recipientId, custom as JsonObject);
  }

  override sendAttachment(recipientId: string, attachment: unknown): Promise<void> {
    return this.send(recipientId, { attachment: attachment });
  }
}
