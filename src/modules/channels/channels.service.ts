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
  ConversationReader,
  DialogueError,
  MessageHandler,
  OutputChannel,
  OutputChannelDirectory,
} from 'src/core';
import { IdempotentIngress } from 'src/modules/idempotency';
import { APP_CONFIG, type AppConfig } from 'src/platform/config/app-config';
import { CallbackChannel } from './callback/callback-channel';
import { type ChannelSetup } from './channel-config';
import { type Connector } from './connector/connector';
import { CustomWebhook } from './custom/custom-webhook';
import { ChannelInput, type InputLog } from './input/channel-input';
import { SocketIoServer } from './socketio/socketio.server';

/** DI token of the ChannelSetup read from credentials.yml. */
export const CHANNEL_SETUP = Symbol('CHANNEL_SETUP');

type Served =
  | { readonly kind: 'callback'; readonly channel: CallbackChannel }
  | { readonly kind: 'custom'; readonly channel: CustomWebhook }
  | { readonly kind: 'socketio' }
  | { readonly kind: 'connector'; readonly connector: Connector };

/**
 * The input channels of `credentials.yml` at run time: the callback and custom webhooks, the
 * messaging connectors (`connectors.ts`), the socket.io server, and the output channel of each
 * (for `output_channel=<name>`), registered into the OutputChannelDirectory when the
 * application starts. Needs only core ports.
 */
@Injectable()
export class ChannelsService implements BeforeApplicationShutdown, OnApplicationBootstrap {
  private readonly log = new Logger('Channels');
  private readonly served = new Map<string, Served>();
  private socketIo: SocketIoServer | null = null;

  constructor(
    @Inject(CHANNEL_SETUP) private readonly setup: ChannelSetup,
    private readonly handler: MessageHandler,
    conversations: ConversationReader,
    private readonly outputs: OutputChannelDirectory,
    private readonly adapterHost: HttpAdapterHost,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    ingress: IdempotentIngress,
  ) {
    const maxTextLength = config.http.maxTextLength;
    for (const c of setup.channels) {
      if (c.kind === 'callback') {
        const input = this.input(c.name, this.log);
        this.served.set(c.name, {
          kind: 'callback',
          channel: new CallbackChannel(c.endpoint, input, maxTextLength, ingress),
        });
      } else if (c.kind === 'custom') {
        const input = this.input(c.name, this.log);
        this.served.set(c.name, {
          kind: 'custom',
          channel: new CustomWebhook(
            c.name,
            c.channel,
            input,
            conversations,
            maxTextLength,
            ingress,
          ),
        });
      } else if (c.kind === 'socketio') {
        this.served.set(c.name, { kind: 'socketio' });
      } else if (c.kind === 'connector') {
        const connector = c.definition.create(
          c.settings,
          this.input(c.name, this.log),
          ingress,
          conversations,
        );
        this.served.set(c.name, { kind: 'connector', connector });
      }
    }
  }

  onApplicationBootstrap(): void {
    for (const warning of this.setup.warnings) this.log.warn(warning);
    for (const channel of this.setup.channels) {
      if (this.served.has(channel.name)) {
        this.outputs.register(channel.name, () => this.outputChannel(channel.name));
      }
      const served = this.served.get(channel.name);
      if (served?.kind === 'connector' && served.connector.start !== undefined) {
        // Not awaited: a platform that is slow or down must not hold the start up.
        void served.connector
          .start()
          .catch((e: unknown) =>
            this.log.warn(
              { channel: channel.name, err: (e as Error).message },
              'connector start failed',
            ),
          );
      }
      if (served?.kind === 'connector' && served.connector.attach !== undefined) {
        served.connector.attach(this.adapterHost.httpAdapter.getHttpServer() as HttpServer);
      }
      if (channel.kind === 'socketio') {
        this.socketIo = new SocketIoServer(
          channel.settings,
          // socket.io logs a failed turn itself and emits its failure body to the socket.
          this.input('socketio', null),
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
    for (const served of this.served.values()) {
      if (served.kind === 'connector') served.connector.stop?.();
    }
    this.socketIo?.close();
    this.socketIo = null;
  }

  /**
   * The output channel a configured channel offers for `output_channel=<name>` (Rasa's
   * `get_output_channel`): callback → POSTs to its URL, socketio → emits to the conversation's
   * room, a custom channel → its `getOutputChannel()`. Null when the channel has none (`rest`)
   * or is not configured; the caller then collects the messages.
   */
  outputChannel(name: string): OutputChannel | null {
    const served = this.served.get(name);
    switch (served?.kind) {
      case 'callback':
      case 'custom':
        return served.channel.outputChannel();
      case 'socketio':
        return this.socketIo?.outputChannel() ?? null;
      case 'connector':
        return served.connector.outputChannel();
      case undefined:
        return null;
    }
  }

  /** The messaging connector serving `name`, if configured. */
  connector(name: string): Connector | null {
    const served = this.served.get(name);
    return served?.kind === 'connector' ? served.connector : null;
  }

  /** `GET /webhooks/<name>/`. */
  async health(name: string): Promise<unknown> {
    const served = this.served.get(name);
    if (served?.kind === 'custom') return await served.channel.health();
    return { status: 'ok' };
  }

  /** `POST /webhooks/<name>/webhook` of the callback and custom channels. */
  async webhook(name: string, req: Request, res: Response): Promise<void> {
    const served = this.served.get(name);
    if (served?.kind === 'callback' || served?.kind === 'custom') {
      await served.channel.webhook(req, res);
      return;
    }
    throw new DialogueError('REQUEST.INVALID_PARAMETER', `Channel "${name}" has no webhook.`, {
      channel: name,
    });
  }

  private input(channel: string, log: InputLog | null): ChannelInput {
    return new ChannelInput(this.handler, {
      channel,
      log,
    });
  }
}
