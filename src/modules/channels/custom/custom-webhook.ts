import type { Request, Response } from 'express';
import {
  CollectingOutputChannel,
  type ConversationReader,
  DialogueError,
  EventVerbosity,
  type JsonObject,
  type OutputChannel,
  requireConversationId,
  requireUserText,
} from 'src/core';
import { type ChannelInput } from 'src/modules/channels/input/channel-input';
import { StreamingOutputChannel } from 'src/modules/channels/input/streaming-output-channel';
import { parseWebhookBody } from 'src/modules/channels/input/webhook-input';
import { type IdempotentIngress, messageIdOf } from 'src/modules/idempotency';
import { type ChannelRequest, type ChannelTurn, type CustomChannel } from './custom-channel';

/**
 * Serves one custom channel of credentials.yml at `/webhooks/<name>/` (see CustomChannel): its
 * health route, its webhook (the channel's `extract*` methods or the REST-style body, one turn,
 * then `respond` with the tracker read through the ConversationReader port) and its output
 * channel for `output_channel=<name>`.
 */
export class CustomWebhook {
  constructor(
    private readonly name: string,
    private readonly channel: CustomChannel,
    private readonly input: ChannelInput,
    private readonly conversations: ConversationReader,
    private readonly maxTextLength: number,
    private readonly ingress: IdempotentIngress,
  ) {}

  /** The channel's `getOutputChannel()`; null: the messages are collected. */
  outputChannel(): OutputChannel | null {
    return this.channel.getOutputChannel?.() ?? null;
  }

  /** `GET /webhooks/<name>/`. */
  async health(): Promise<unknown> {
    return this.channel.health ? await this.channel.health() : { status: 'ok' };
  }

  /** `POST /webhooks/<name>/webhook`. */
  async webhook(req: Request, res: Response): Promise<void> {
    const { name, channel } = this;
    const request: ChannelRequest = {
      method: req.method,
      path: req.path,
      body: req.body as unknown,
      query: req.query,
      headers: req.headers,
    };
    // The REST body contract applies unless the channel reads sender and text itself.
    const ownBody = channel.extractSender !== undefined && channel.extractMessage !== undefined;
    const input = ownBody ? null : parseWebhookBody(request.body, name, this.maxTextLength);
    const read = async <T>(what: string, fn: () => T | Promise<T>): Promise<T> => {
      try {
        return await fn();
      } catch (e) {
        if (e instanceof DialogueError) throw e;
        throw new DialogueError(
          'REQUEST.INVALID_PARAMETER',
          `Channel "${name}" could not read the ${what} of the request: ${(e as Error).message}`,
          { channel: name, parameter: what },
        );
      }
    };
    const sender: unknown = channel.extractSender
      ? await read('sender', () => channel.extractSender!(request))
      : input!.sender;
    const text: unknown = channel.extractMessage
      ? await read('message', () => channel.extractMessage!(request))
      : input!.message;
    if (typeof sender !== 'string' || sender.length === 0) {
      throw new DialogueError(
        'REQUEST.INVALID_PARAMETER',
        `Channel "${name}" found no sender id in the request.`,
        { channel: name, parameter: 'sender' },
      );
    }
    if (typeof text !== 'string') {
      throw new DialogueError(
        'REQUEST.INVALID_PARAMETER',
        `Channel "${name}" found no message text in the request.`,
        { channel: name, parameter: 'message' },
      );
    }
    requireConversationId(sender, 'sender', 'body');
    requireUserText(text, this.maxTextLength, 'message');
    const metadata = channel.getMetadata
      ? await read('metadata', () => channel.getMetadata!(request))
      : (input?.metadata ?? bodyMetadata(request.body));
    const inputChannel = input?.inputChannel ?? name;
    const stream =
      input?.stream === true ||
      (typeof req.query.stream === 'string' && req.query.stream.toLowerCase() === 'true');
    const messageId = input?.messageId ?? messageIdOf(request.body);
    await this.ingress.run(req, res, { scope: name, sender }, messageId, () =>
      this.answer({ res, request, text, sender, inputChannel, metadata, stream, messageId }),
    );
  }

  private async answer(turnInput: {
    res: Response;
    request: ChannelRequest;
    text: string;
    sender: string;
    inputChannel: string;
    metadata: JsonObject | null;
    stream: boolean;
    messageId: string | null;
  }): Promise<void> {
    const { res, request, text, sender, inputChannel, metadata, stream, messageId } = turnInput;
    const { name, channel } = this;
    const own = this.outputChannel();

    if (stream && own === null) {
      res.status(200).type('text/event-stream');
      await this.input.handleMessage({
        text,
        senderId: sender,
        inputChannel,
        output: new StreamingOutputChannel(res, name),
        metadata,
        messageId,
      });
      res.end();
      return;
    }
    const output = own ?? new CollectingOutputChannel(name);
    await this.input.handleMessage({
      text,
      senderId: sender,
      inputChannel,
      output,
      metadata,
      messageId,
    });
    const turn: ChannelTurn = {
      messages: output instanceof CollectingOutputChannel ? output.messages : [],
      metadata: metadata ?? {},
      conversationId: sender,
      trackerState: await this.trackerState(sender),
    };
    const body: unknown = channel.respond
      ? await channel.respond(turn, request)
      : {
          messages: turn.messages,
          metadata: turn.metadata,
          conversation_id: turn.conversationId,
          tracker_state: turn.trackerState,
        };
    res.status(200).json(body);
  }

  /** The tracker after the turn; null while no model is loaded (the message was ignored). */
  private async trackerState(sender: string): Promise<JsonObject | null> {
    try {
      return await this.conversations.trackerState(sender, EventVerbosity.AFTER_RESTART);
    } catch (e) {
      if (e instanceof DialogueError && e.code === 'MODEL.NOT_LOADED') return null;
      throw e;
    }
  }
}

/** `metadata` of a body the channel reads itself, when it is an object. */
function bodyMetadata(body: unknown): JsonObject | null {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return null;
  const metadata = (body as Record<string, unknown>).metadata;
  return typeof metadata === 'object' && metadata !== null && !Array.isArray(metadata)
    ? (metadata as JsonObject)
    : null;
}
