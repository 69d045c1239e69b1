import { type DynamicModule, Module } from '@nestjs/common';
import { channelSetupOf } from 'src/modules/channels';
import { EngineModule } from 'src/modules/engine';
import { type AppConfig } from 'src/platform/config/app-config';
import { inspectorPageController } from './inspector-page.controller';
import { InspectorPages, pageConfigs } from './inspector-pages';
import { TrackerStreamGateway } from './tracker-stream.gateway';

/**
 * The development inspector (`parley run --inspect`, `parley inspect`): a page per input
 * channel at `/webhooks/<channel>/inspect.html` and the `tracker_stream` WebSocket beside it.
 * Without --inspect only the gateway is there, answering 404 to stream upgrades.
 */
@Module({})
export class InspectorModule {
  static forRoot(config: AppConfig): DynamicModule {
    if (!config.inspect) {
      return { module: InspectorModule, providers: [TrackerStreamGateway] };
    }
    const channels = pageConfigs(channelSetupOf(config)).map((p) => p.channel);
    return {
      module: InspectorModule,
      imports: [EngineModule],
      controllers: channels.map(inspectorPageController),
      providers: [InspectorPages, TrackerStreamGateway],
      exports: [InspectorPages],
    };
  }
}
