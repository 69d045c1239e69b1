import type * as KafkaJs from 'kafkajs';
import type { Kafka, Producer, SASLOptions } from 'kafkajs';
import { readFileSync } from 'node:fs';
import { type ConnectionOptions } from 'node:tls';
import { type KafkaBrokerConfig } from 'src/modules/engine';
import { rasaEnvironment, type BrokerMessage } from 'src/modules/event-broker/wire';
import { EventBroker, type PublishHeaders } from './event-broker';

/**
 * Kafka as Rasa's `KafkaEventBroker` publishes: one message per event to `topic`, value = the
 * flat JSON, key = the conversation id when `partition_by_sender` (Parley's default: a
 * conversation stays on one partition, hence in order), header `RASA_ENVIRONMENT`. Sends with
 * acks=all and resolves once the partition leaders acknowledged; kafkajs' own retries are kept
 * short, the relay's backoff does the waiting.
 */
export class KafkaBroker extends EventBroker {
  readonly name = 'kafka';
  private readonly kafka: Kafka;
  private producer: Producer | null = null;
  private connecting: Promise<Producer> | null = null;

  constructor(private readonly config: KafkaBrokerConfig) {
    super();
    // kafkajs loads only when a Kafka broker is configured (start-up time).
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- see above
    const { Kafka, logLevel } = require('kafkajs') as typeof KafkaJs;
    this.kafka = new Kafka({
      clientId: config.clientId,
      brokers: [...config.brokers],
      ssl: sslOf(config),
      ...(config.sasl ? { sasl: config.sasl as SASLOptions } : {}),
      connectionTimeout: 5_000,
      requestTimeout: 15_000,
      retry: { retries: 2, initialRetryTime: 200, maxRetryTime: 2_000 },
      logLevel: logLevel.NOTHING,
    });
  }

  get target(): string {
    return `kafka ${this.config.brokers.join(',')} topic ${this.config.topic}`;
  }

  async connect(): Promise<void> {
    await this.ready();
  }

  private ready(): Promise<Producer> {
    if (this.producer !== null) return Promise.resolve(this.producer);
    this.connecting ??= (async () => {
      const producer = this.kafka.producer({ allowAutoTopicCreation: true });
      producer.on(producer.events.DISCONNECT, () => {
        if (this.producer === producer) this.producer = null;
      });
      await producer.connect();
      this.producer = producer;
      return producer;
    })().finally(() => {
      this.connecting = null;
    });
    return this.connecting;
  }

  async publish(messages: readonly BrokerMessage[], headers: PublishHeaders = {}): Promise<void> {
    const producer = await this.ready();
    const environment = rasaEnvironment() ?? 'RASA_ENVIRONMENT_NOT_SET';
    try {
      await producer.send({
        topic: this.config.topic,
        acks: -1,
        messages: messages.map((m) => ({
          ...(this.config.partitionBySender ? { key: m.conversationId } : {}),
          value: m.body,
          headers: {
            ...headers,
            RASA_ENVIRONMENT: environment,
            event_id: m.eventId,
            seq: String(m.seq),
          },
        })),
      });
    } catch (error) {
      await this.reset();
      throw error;
    }
  }

  private async reset(): Promise<void> {
    const producer = this.producer;
    this.producer = null;
    await producer?.disconnect().catch(() => undefined);
  }

  async close(): Promise<void> {
    await this.reset();
  }
}

/** `security_protocol` SSL / SASL_SSL with the `ssl_*` files; plaintext otherwise. */
function sslOf(config: KafkaBrokerConfig): ConnectionOptions | boolean {
  if (config.securityProtocol !== 'SSL' && config.securityProtocol !== 'SASL_SSL') return false;
  const { cafile, certfile, keyfile, checkHostname } = config.ssl;
  return {
    rejectUnauthorized: true,
    ...(cafile ? { ca: [readFileSync(cafile, 'utf8')] } : {}),
    ...(certfile ? { cert: readFileSync(certfile, 'utf8') } : {}),
    ...(keyfile ? { key: readFileSync(keyfile, 'utf8') } : {}),
    ...(checkHostname ? {} : { checkServerIdentity: () => undefined }),
  };
}
