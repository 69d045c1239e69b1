import { DynamicModule, Module } from '@nestjs/common';
import { AuthModule } from 'src/modules/auth';
import { ChannelsModule } from 'src/modules/channels';
import { ConversationsModule } from 'src/modules/conversations';
import { ConversationsGraphqlModule } from 'src/modules/conversations-graphql';
import { EventBrokerModule } from 'src/modules/event-broker';
import { InspectorModule } from 'src/modules/inspector';
import { ModelHttpModule } from 'src/modules/model';
import { ObservabilityModule } from 'src/modules/observability';
import { RateLimitModule } from 'src/modules/rate-limit';
import { ReviewModule } from 'src/modules/review';
import { ServerInfoModule } from 'src/modules/server-info';
import { VoiceGatewayModule } from 'src/modules/voice-gateway';
import { type AppConfig } from 'src/platform/config/app-config';
import { ConfigModule } from 'src/platform/config/config.module';
import { DatabaseModule } from 'src/platform/database/database.module';
import { HealthModule } from 'src/platform/health/health.module';
import { LoggingModule } from 'src/platform/logging/logging.module';

/** The Parley service. `databaseUrl` is resolved before (external or embedded PostgreSQL). */
@Module({})
export class AppModule {
  static forRoot(config: AppConfig, databaseUrl: string): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ConfigModule.forRoot(config),
        LoggingModule.forRoot(config),
        DatabaseModule.forRoot(
          databaseUrl,
          config.database.poolSize,
          config.database.queryTimeoutMs,
        ),
        // Routes are registered in this order, and Express tries them one by one: the channels
        // (the REST channel's webhook, every user message) come first.
        ChannelsModule.forRoot(config),
        InspectorModule.forRoot(config),
        AuthModule,
        // After AuthModule: its global guard runs first, so a verified token's subject is the
        // rate limit's client.
        RateLimitModule.forRoot(config),
        HealthModule,
        ObservabilityModule,
        ServerInfoModule.forRoot(config),
        ConversationsModule.forRoot(config),
        ModelHttpModule.forRoot(config),
        ConversationsGraphqlModule,
        // The conversation review page: a client of that API, served with it.
        ReviewModule,
        VoiceGatewayModule.forRoot(config),
        EventBrokerModule,
      ],
    };
  }
}
