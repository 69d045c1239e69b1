import { Logger, Module } from '@nestjs/common';
import { readEventBroker } from 'src/modules/engine';
import { EventOutbox, TrackerModule } from 'src/modules/tracker';
import { APP_CONFIG, type AppConfig } from 'src/platform/config/app-config';
import { DATABASE_URL } from 'src/platform/database/database.module';
import { createBroker } from './brokers/create-broker';
import {
  EVENT_BROKER_SETUP,
  EventBrokerService,
  type EventBrokerSetup,
} from './event-broker.service';
import { OutboxRelay } from './outbox-relay';

/**
 * Events out: reads `event_broker` of endpoints.yml (a malformed one or an unknown type stops
 * start-up), turns on the tracker store's transactional outbox, and relays it to the broker
 * (RabbitMQ, Kafka or an SQL table) after commit. Without `event_broker` it does nothing and
 * turns write no outbox rows.
 */
@Module({
  imports: [TrackerModule],
  providers: [
    {
      provide: EVENT_BROKER_SETUP,
      inject: [APP_CONFIG, DATABASE_URL, EventOutbox],
      useFactory: async (
        config: AppConfig,
        databaseUrl: string,
        outbox: EventOutbox,
      ): Promise<EventBrokerSetup | null> => {
        const file = config.files.endpoints;
        if (file === null) return null;
        const brokerConfig = await readEventBroker(file);
        if (brokerConfig === null) return null;
        const broker = createBroker(brokerConfig, databaseUrl);
        outbox.enable();
        const logger = new Logger('EventBroker');
        const relay = new OutboxRelay(outbox, broker, {
          info: (message, data) => logger.log(data ?? {}, message),
          warn: (message, data) => logger.warn(data ?? {}, message),
        });
        return {
          broker,
          relay,
          raiseOnFailure: brokerConfig.type === 'pika' && brokerConfig.raiseOnFailure,
        };
      },
    },
    EventBrokerService,
  ],
  exports: [EventBrokerService],
})
export class EventBrokerModule {}
