// The composition root's public surface: other modules import from here only.
export { readDialogueEndpoints, readEventBroker, type DialogueEndpoints } from './endpoints';
export { EngineModule } from './engine.module';
export {
  SUPPORTED_BROKERS,
  eventBrokerOf,
  type AnonymizedDestination,
  type EventBrokerConfig,
  type KafkaBrokerConfig,
  type PiiRouting,
  type PikaBrokerConfig,
  type SqlBrokerConfig,
} from './event-broker-config';
