import { DynamicModule, Module } from '@nestjs/common';
import { EngineModule } from 'src/modules/engine';
import { ModelModule } from 'src/modules/model';
import { type AppConfig } from 'src/platform/config/app-config';
import { SpeechEngineFactory } from './engines/speech-engine.factory';
import { GenesysHealthController } from './genesys-health.controller';
import { VoiceAuthService } from './voice-auth.service';
import { readVoiceCredentials } from './voice-credentials';
import { VoiceGatewayService } from './voice-gateway.service';
import { VOICE_CONFIG } from './voice-gateway.tokens';
import { VoiceMetrics } from './voice-metrics';
import { VoiceWsAdapter } from './voice-ws.adapter';

/**
 * The Genesys Cloud Audio Connector voice stream, the fifth input channel: on when
 * credentials.yml has a `genesys` entry (a key the channels module knows and checks too); an
 * invalid entry stops start-up with a message naming the key. It takes the core ports
 * MessageHandler and ConversationReader from the composition root (EngineModule).
 */
@Module({})
export class VoiceGatewayModule {
  static forRoot(config: AppConfig): DynamicModule {
    const voice = readVoiceCredentials(config.files.credentials, config.speechKeys);
    if (voice === null) return { module: VoiceGatewayModule };
    return {
      module: VoiceGatewayModule,
      imports: [EngineModule, ModelModule],
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
