import { type UserMessage } from 'src/core/channels/user-message';

/**
 * Port: handles one user message end to end — under the conversation's lock: session start,
 * NLU, prediction loop, actions, persistence — and sends the bot's answers to
 * `message.output`. Resolves once every answer has been handed to the output channel.
 * Implemented by the dialogue engine; used by every input channel (REST, callback, custom,
 * socket.io, voice).
 */
export abstract class MessageHandler {
  abstract handleMessage(message: UserMessage): Promise<void>;
}
