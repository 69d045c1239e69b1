import { DynamicModule, Module } from '@nestjs/common';
import { existsSync } from 'node:fs';
import { EngineModule } from 'src/modules/engine';
import { IdempotencyModule } from 'src/modules/idempotency';
import { type AppConfig } from 'src/platform/config/app-config';
import { type ChannelSetup, configureChannels } from './channel-config';
import { CHANNEL_SETUP, ChannelsService } from './channels.service';
import { connectorController } from './connector/connector.controller';
import { readCredentialsFile } from './credentials';
import { RestWebhookController } from './rest/rest-webhook.controller';
import { webhookController } from './webhook.controller';

/**
 * The input channels: `rest` (always served), and from a Rasa-style `credentials.yml`
 * (`--credentials`) `callback`, `socketio`, the messaging connectors of `connectors.ts`
 * (Rasa's names), and custom channels, each at `/webhooks/<name>/`.
 * The voice connector's key (`genesys`) is accepted and checked here and served by the voice
 * gateway module. Bad entries stop the start with an error naming the key. Needs the core
 * ports MessageHandler, ConversationReader and OutputChannelDirectory from the application.
 */
const setups = new WeakMap<AppConfig, ChannelSetup>();

/**
 * The input channels of a server, read once per configuration: `credentials.yml` (as `rasa
 * run`: without --credentials, ./credentials.yml when it exists), or for `parley inspect` its
 * one channel with defaults. `rest` is served in any case and not listed unless configured.
 */
export function channelSetupOf(config: AppConfig): ChannelSetup {
  let setup = setups.get(config);
  if (setup === undefined) {
    if (config.inspectConnector === 'socketio') {
      setup = configureChannels(new Map([['socketio', {}]]), '(parley inspect)');
    } else {
      const given = config.files.credentials === '' ? null : config.files.credentials;
      const file = given ?? (existsSync('credentials.yml') ? 'credentials.yml' : null);
      setup = configureChannels(readCredentialsFile(file), file ?? 'credentials.yml');
    }
    setups.set(config, setup);
  }
  return setup;
}

@Module({})
export class ChannelsModule {
  static forRoot(config: AppConfig): DynamicModule {
    const setup = channelSetupOf(config);
    const controllers = setup.channels
      .filter((c) => c.kind === 'callback' || c.kind === 'socketio' || c.kind === 'custom')
      .map((c) => webhookController(c.name, c.kind !== 'socketio'));
    const connectors = setup.channels
      .flatMap((c) => (c.kind === 'connector' ? [c] : []))
      .map((c) => connectorController(c.name, c.definition.routes));
    return {
      module: ChannelsModule,
      // The REST webhook carries every user message: its route is registered first.
      imports: [EngineModule, IdempotencyModule],
      controllers: [RestWebhookController, ...controllers, ...connectors],
      providers: [{ provide: CHANNEL_SETUP, useValue: setup }, ChannelsService],
    };
  }
}
