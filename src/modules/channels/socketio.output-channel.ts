import { type BotMessage, type JsonObject, OutputChannel } from 'src/core';

/** The part of a socket.io server (or namespace) the output channel needs. */
export interface SocketEmitter {
  to(room: string): { emit(event: string, ...args: unknown[]): boolean };
}

/**
 * Rasa's SocketIOOutput: every bot message is emitted as `bot_message_evt` to the recipient's
 * room (the socket id, or the session id with `session_persistence`), in the shape the
 * `rasa-webchat` widget renders: buttons and quick replies become `quick_replies` of
 * `{content_type: "text", title, payload}`, an image becomes
 * `{attachment: {type: "image", payload: {src}}}`, each element a generic template. A custom
 * payload is emitted as it is; with a `data` key, `data` is emitted (to `room` when it names one),
 * as Rasa's `sio.emit(**custom)` does.
 */
export class SocketIoOutputChannel extends OutputChannel {
  readonly name = 'socketio';

  constructor(
    private readonly emitter: SocketEmitter,
    private readonly botMessageEvt: string,
  ) {
    super();
  }

  send(recipientId: string, message: BotMessage): Promise<void> {
    for (const [room, payload] of socketIoMessages(recipientId, message)) {
      this.emitter.to(room).emit(this.botMessageEvt, payload);
    }
    return Promise.resolve();
  }
}

/** Translates one dispatched bot message into `[room, payload]` emissions. */
export function socketIoMessages(
  recipientId: string,
  message: BotMessage,
): Array<[string, unknown]> {
  if (message.custom !== undefined && message.custom !== null) {
    const custom = message.custom;
    if (typeof custom === 'object' && !Array.isArray(custom) && 'data' in custom) {
      const c = custom as JsonObject;
      const room = typeof c.room === 'string' ? c.room : recipientId;
      return [[room, c.data]];
    }
    return [[recipientId, custom]];
  }
  if (typeof message.image === 'string') {
    return [[recipientId, { attachment: { type: 'image', payload: { src: message.image } } }]];
  }
  if (message.attachment !== undefined && message.attachment !== null) {
    return [[recipientId, { attachment: message.attachment }]];
  }
  if (Array.isArray(message.elements)) {
    return message.elements.map((element: unknown) => [
      recipientId,
      {
        attachment: { type: 'template', payload: { template_type: 'generic', elements: element } },
      },
    ]);
  }
  const replies = Array.isArray(message.quick_replies)
    ? message.quick_replies
    : Array.isArray(message.buttons)
      ? message.buttons
      : null;
  const text = typeof message.text === 'string' ? message.text : '';
  if (replies !== null) {
    return [
      [
        recipientId,
        {
          text,
          quick_replies: replies.map((b) => {
            const button = (b ?? {}) as JsonObject;
            return { content_type: 'text', title: button.title, payload: button.payload };
          }),
        },
      ],
    ];
  }
  return [[recipientId, { text }]];
}
