import { type BrokerMessage } from 'src/modules/event-broker/wire';

/** Extra headers of a publication (`parley export`: `rasa-export-process-id`). */
export type PublishHeaders = Readonly<Record<string, string>>;

/**
 * A broker adapter. `publish` resolves only once the broker confirmed every message (publisher
 * confirms, acks=all, a committed INSERT): the relay deletes outbox rows after that, never
 * before. It rejects on any failure; the adapter then reconnects on the next call.
 */
export abstract class EventBroker {
  /** `pika`, `kafka` or `sql`: the `broker` label of the metrics. */
  abstract readonly name: string;
  /** Where it publishes, without secrets, for logs. */
  abstract readonly target: string;
  /** Connects now (start-up check); publish() connects by itself too. */
  abstract connect(): Promise<void>;
  abstract publish(messages: readonly BrokerMessage[], headers?: PublishHeaders): Promise<void>;
  abstract close(): Promise<void>;
}
