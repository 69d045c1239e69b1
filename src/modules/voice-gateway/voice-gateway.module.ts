import { DynamicModule, Module } from '@nestjs/common';
import { parseVoiceConnectorConfig } from 'src/core';
import { registerChannel } from 'src/modules/channels/channel-config';
import { ModelModule } from 'src/modules/model';
import { type AppConfig } from 'src/platform/config/app-config';
import { SpeechEngineFactory } from './engines/speech-engine.factory';
import { GenesysHealthController } from './genesys-health.controller';
import { VoiceAuthService } from './voice-auth.service';
import { GENESYS_PROVIDER, readVoiceCredentials } from './voice-credentials';
import { VoiceGatewayService } from './voice-gateway.service';
import { VOICE_CONFIG } from './voice-gateway.tokens';
import { VoiceMetrics } from './voice-metrics';
import { VoiceWsAdapter } from './voice-ws.adapter';

// credentials.yml may list the voice connector: the channels reader accepts its key and checks
// it with the same validation as this module.
registerChannel({
  name: GENESYS_PROVIDER,
  validate: (settings) => {
    parseVoiceConnectorConfig(settings, GENESYS_PROVIDER);
  },
});

/**
 * The Genesys Cloud Audio Connector voice stream (issue 7): on when credentials.yml has a
 * `genesys` entry; an invalid entry stops start-up with a message naming the key.
 */
@Module({})
export class VoiceGatewayModule {
  static forRoot(config: AppConfig): DynamicModule {
    const voice = readVoiceCredentials(config.files.credentials, config.speechKeys);
    if (voice === null) return { module: VoiceGatewayModule };
    return {
      module: VoiceGatewayModule,
      imports: [ModelModule],
      controllers: [GenesysHealthController],
      providers: [
        { provide: VOICE_CONFIG, useValue: voice },
        VoiceMetrics,
        VoiceAuthService,
        SpeechEngineFactory,
        VoiceGatewayService,
        VoiceWsAdapter,
      ],
      exports: [VoiceGatewayService, VoiceMetrics],
    };
  }
}
