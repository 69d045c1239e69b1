/** The event-broker module's public surface: import from 'src/modules/event-broker'. */
export { createBroker, sameDatabase } from './brokers/create-broker';
export { EventBroker, type PublishHeaders } from './brokers/event-broker';
export { KafkaBroker } from './brokers/kafka-broker';
export { PiiBroker, anonymizeMessages } from './brokers/pii-broker';
export { PikaBroker } from './brokers/pika-broker';
export { SqlBroker } from './brokers/sql-broker';
export { EventBrokerModule } from './event-broker.module';
export { EventBrokerService } from './event-broker.service';
export { exportToBroker, type ExportResult } from './export';
export { DEFAULT_RELAY_OPTIONS, OutboxRelay, type RelayOptions } from './outbox-relay';
export { eventIdOf, toBrokerMessage, type BrokerMessage } from './wire';
