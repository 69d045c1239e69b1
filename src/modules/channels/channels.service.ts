import {
  BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  OnApplicationBootstrap,
} from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { Request, Response } from 'express';
import type { Server as HttpServer } from 'node:http';
import {
  type BotMessage,
  CollectingOutputChannel,
  ConversationReader,
  DialogueError,
  EventVerbosity,
  type JsonObject,
  MessageHandler,
  OutputChannel,
  OutputChannelDirectory,
  requireConversationId,
  requireUserText,
  type UserMessage,
} from 'src/core';
import { APP_CONFIG, type AppConfig } from 'src/platform/config/app-config';
import { CallbackOutputChannel } from './callback.output-channel';
import { type ChannelSetup, type ConfiguredChannel } from './channel-config';
import { type ChannelCredentials } from './credentials';
import { type ChannelRequest, type ChannelTurn, type CustomChannel } from './custom-channel';
import { SocketIoServer } from './socketio.server';
import { parseWebhookBody } from './webhook-input';

/** DI token of the ChannelSetup read from credentials.yml. */
export const CHANNEL_SETUP = Symbol('CHANNEL_SETUP');

/**
 * The input channels of `credentials.yml` at run time: the callback and custom webhooks, the
 * socket.io server, and the output channel of each (for `output_channel=<name>`).
 */
@Injectable()
export class ChannelsService implements BeforeApplicationShutdown, OnApplicationBootstrap {
  private readonly log = new Logger('Channels');
  private readonly byName = new Map<string, ConfiguredChannel>();
  private socketIo: SocketIoServer | null = null;

  constructor(
    @Inject(CHANNEL_SETUP) private readonly setup: ChannelSetup,
    private readonly trackers: ConversationReader,
    private readonly handler: MessageHandler,
    private readonly outputs: OutputChannelDirectory,
    private readonly adapterHost: HttpAdapterHost,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    for (const channel of setup.channels) this.byName.set(channel.name, channel);
  }

  onApplicationBootstrap(): void {
    for (const warning of this.setup.warnings) this.log.warn(warning);
    for (const channel of this.setup.channels) {
      if (channel.kind !== 'rest' && channel.kind !== 'registered') {
        this.outputs.register(channel.name, () => this.outputChannel(channel.name));
      }
      if (channel.kind === 'socketio') {
        this.socketIo = new SocketIoServer(
          channel.settings,
          this.handler,
          this.config.http.cors,
          this.config.http.maxTextLength,
        );
        this.socketIo.attach(this.adapterHost.httpAdapter.getHttpServer() as HttpServer);
      }
    }
    if (this.setup.channels.length > 0) {
      this.log.log(
        { channels: this.setup.channels.map((c) => c.name) },
        'input channels configured',
      );
    }
  }

  /** Before the HTTP server closes, so open sockets do not hold its close up. */
  beforeApplicationShutdown(): void {
    this.socketIo?.close();
    this.socketIo = null;
  }

  /** The settings of a channel another module serves (registerChannel); undefined if absent. */
  settingsOf(name: string): ChannelCredentials | undefined {
    const channel = this.byName.get(name);
    return channel?.kind === 'registered' ? channel.settings : undefined;
  }

  /** Names of the configured channels, in credentials.yml order. */
  names(): string[] {
    return this.setup.channels.map((c) => c.name);
  }

  /**
   * The output channel a configured channel offers for `output_channel=<name>` (Rasa's
   * `get_output_channel`): callback → POSTs to its URL, socketio → emits to the conversation's
   * room, a custom channel → its `getOutputChannel()`. Null when the channel has none (`rest`)
   * or is not configured; the caller then collects the messages.
   */
  outputChannel(name: string): OutputChannel | null {
    const channel = this.byName.get(name);
    switch (channel?.kind) {
      case 'callback':
        return new CallbackOutputChannel(channel.endpoint);
      case 'socketio':
        return this.socketIo?.outputChannel() ?? null;
      case 'custom':
        return channel.channel.getOutputChannel?.() ?? null;
      case 'rest':
      case 'registered':
      case undefined:
        return null;
    }
  }

  /** `GET /webhooks/<name>/`. */
  async health(name: string): Promise<unknown> {
    const channel = this.byName.get(name);
    if (channel?.kind === 'custom' && channel.channel.health) return await channel.channel.health();
    return { status: 'ok' };
  }

  /** `POST /webhooks/<name>/webhook` of the callback and custom channels. */
  async webhook(name: string, req: Request, res: Response): Promise<void> {
    const channel = this.byName.get(name);
    if (channel?.kind === 'callback') {
      const input = parseWebhookBody(req.body, 'callback', this.config.http.maxTextLength);
      await this.handler.handleMessage({
        text: input.message,
        senderId: input.sender,
        inputChannel: input.inputChannel ?? 'callback',
        output: new CallbackOutputChannel(channel.endpoint),
        metadata: input.metadata,
      });
      res.status(200).type('text/plain').send('success');
      return;
    }
    if (channel?.kind === 'custom') {
      await this.customWebhook(name, channel.channel, req, res);
      return;
    }
    throw new DialogueError('REQUEST.INVALID_PARAMETER', `Channel "${name}" has no webhook.`, {
      channel: name,
    });
  }

  private async customWebhook(
    name: string,
    channel: CustomChannel,
    req: Request,
    res: Response,
  ): Promise<void> {
    const request: ChannelRequest = {
      method: req.method,
      path: req.path,
      body: req.body as unknown,
      query: req.query,
      headers: req.headers,
    };
    // The REST body contract applies unless the channel reads sender and text itself.
    const ownBody = channel.extractSender !== undefined && channel.extractMessage !== undefined;
    const input = ownBody
      ? null
      : parseWebhookBody(request.body, name, this.config.http.maxTextLength);
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
    requireUserText(text, this.config.http.maxTextLength, 'message');
    const metadata = channel.getMetadata
      ? await read('metadata', () => channel.getMetadata!(request))
      : (input?.metadata ?? bodyMetadata(request.body));
    const inputChannel = input?.inputChannel ?? name;
    const stream =
      input?.stream === true ||
      (typeof req.query.stream === 'string' && req.query.stream.toLowerCase() === 'true');
    const own = channel.getOutputChannel?.() ?? null;

    if (stream && own === null) {
      // Headers go out with the first message, which is sent only after the turn is stored:
      // a turn that fails still gets its failure status.
      res.status(200).type('text/event-stream');
      const streaming = new StreamingOutputChannel(name, res);
      await this.handleTurn(name, {
        text,
        senderId: sender,
        inputChannel,
        output: streaming,
        metadata,
      });
      res.end();
      return;
    }
    const output = own ?? new CollectingOutputChannel(name);
    await this.handleTurn(name, { text, senderId: sender, inputChannel, output, metadata });
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

  /**
   * One turn. Unlike Rasa's RestInput (a failed turn answers 200 with the messages so far), a
   * failure reaches the client as a failure body — 503 with Retry-After while the database is
   * unreachable — because the turn was not stored.
   */
  private async handleTurn(name: string, message: UserMessage): Promise<void> {
    try {
      await this.handler.handleMessage(message);
    } catch (e) {
      this.log.warn(
        { channel: name, sender: message.senderId, err: (e as Error).message },
        'the user message could not be handled; the turn was not stored',
      );
      throw e;
    }
  }

  /** The tracker after the turn; null while no model is loaded (the message was ignored). */
  private async trackerState(sender: string): Promise<Record<string, unknown> | null> {
    try {
      return await this.trackers.trackerState(sender, EventVerbosity.AFTER_RESTART);
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

/** Writes each collected message
 to the response as one JSON line, as it is produced. */
class StreamingOutputChannel extends CollectingOutputChannel {
  constructor(
    name: string,
    private readonly res: Response,
  ) {
    super(name);
  }

  override async send(recipientId: string, message: BotMessage): Promise<void> {
    await super.send(recipientId, message);
    const collected: JsonObject | undefined = this.messages[this.messages.length - 1];
    if (collected === undefined) return;
    this.res.write(`${JSON.stringify(collected)}\n`);
  }
}
