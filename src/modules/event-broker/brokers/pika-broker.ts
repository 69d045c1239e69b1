import { connect, type ChannelModel, type ConfirmChannel } from 'amqplib';
import { type PikaBrokerConfig } from 'src/modules/engine';
import { rasaEnvironment, type BrokerMessage } from 'src/modules/event-broker/wire';
import { EventBroker, type PublishHeaders } from './event-broker';

/** How long a publication may wait for the broker's confirms before it counts as failed. */
const CONFIRM_TIMEOUT_MS = 15_000;

/**
 * RabbitMQ as Rasa's `PikaEventBroker` sets it up: a fanout exchange (`exchange_name`, declared
 * like Rasa's — not durable — so an exchange Rasa created is accepted), each of `queues`
 * declared durable and bound with routing key "", persistent JSON messages with `app_id` =
 * RASA_ENVIRONMENT. Unlike Rasa (fire-and-forget) it publishes on a confirm channel and
 * resolves only once RabbitMQ confirmed every message.
 */
export class PikaBroker extends EventBroker {
  readonly name = 'pika';
  private model: ChannelModel | null = null;
  private channel: ConfirmChannel | null = null;
  private connecting: Promise<ConfirmChannel> | null = null;

  /**
   * `direct`: a destination of anonymised copies (`anonymization_queues`): each queue is
   * declared durable and gets the messages through the default exchange, routed by its name —
   * not bound to the fanout exchange, so it receives the anonymised copies only.
   */
  constructor(
    private readonly config: PikaBrokerConfig,
    private readonly direct = false,
  ) {
    super();
  }

  get target(): string {
    return this.direct
      ? `${this.config.safeUrl} queue ${this.config.queues.join(',')}`
      : `${this.config.safeUrl} exchange ${this.config.exchangeName}`;
  }

  /**
   * Connects, trying `connection_attempts` times `retry_delay_in_seconds` apart (the start-up
   * check with `raise_on_failure: true`).
   */
  async connectWithRetries(): Promise<void> {
    let last: unknown;
    for (let attempt = 1; attempt <= this.config.connectionAttempts; attempt++) {
      try {
        await this.connect();
        return;
      } catch (error) {
        last = error;
        if (attempt < this.config.connectionAttempts) {
          await new Promise((r) => setTimeout(r, this.config.retryDelaySeconds * 1000));
        }
      }
    }
    throw last;
  }

  async connect(): Promise<void> {
    await this.ready();
  }

  private ready(): Promise<ConfirmChannel> {
    if (this.channel !== null) return Promise.resolve(this.channel);
    this.connecting ??= this.open().finally(() => {
      this.connecting = null;
    });
    return this.connecting;
  }

  private async open(): Promise<ConfirmChannel> {
    const model = await connect(this.config.url, { timeout: 10_000 });
    const drop = (): void => {
      if (this.model === model) {
        this.model = null;
        this.channel = null;
      }
    };
    model.on('error', drop);
    model.on('close', drop);
    try {
      const channel = await model.createConfirmChannel();
      channel.on('error', drop);
      channel.on('close', drop);
      const { exchangeName, queues } = this.config;
      if (!this.direct) await channel.assertExchange(exchangeName, 'fanout', { durable: false });
      for (const queue of queues) {
        await channel.assertQueue(queue, { durable: true });
        if (!this.direct) await channel.bindQueue(queue, exchangeName, '');
      }
      this.model = model;
      this.channel = channel;
      return channel;
    } catch (error) {
      await model.close().catch(() => undefined);
      throw error;
    }
  }

  async publish(messages: readonly BrokerMessage[], headers: PublishHeaders = {}): Promise<void> {
    const channel = await this.ready();
    const appId = rasaEnvironment();
    try {
      const routes: Array<[string, string]> = this.direct
        ? this.config.queues.map((q) => ['', q])
        : [[this.config.exchangeName, '']];
      for (const m of messages) {
        for (const [exchange, routingKey] of routes) {
          const ok = channel.publish(exchange, routingKey, Buffer.from(m.body), {
            persistent: true,
            contentType: 'application/json',
            messageId: m.eventId,
            ...(appId !== null ? { appId } : {}),
            headers: { ...headers, event_id: m.eventId, seq: m.seq },
          });
          if (!ok) await drained(channel);
        }
      }
      await withTimeout(channel.waitForConfirms(), CONFIRM_TIMEOUT_MS, 'RabbitMQ confirms');
    } catch (error) {
      await this.reset();
      throw error;
    }
  }

  /** Drops the connection after a failure: the next publish reconnects. */
  private async reset(): Promise<void> {
    const model = this.model;
    this.model = null;
    this.channel = null;
    await model?.close().catch(() => undefined);
  }

  async close(): Promise<void> {
    await this.reset();
  }
}

/**
 * Resolves when the channel can take more messages, rejects if it closes first; either way
 * the other listener is removed (a large batch waits many times on one long-lived channel).
 */
function drained(channel: ConfirmChannel): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const onDrain = (): void => {
      channel.off('close', onClose);
      resolve();
    };
    const onClose = (): void => {
      channel.off('drain', onDrain);
      reject(new Error('RabbitMQ channel closed'));
    };
    channel.once('drain', onDrain);
    channel.once('close', onClose);
  });
}

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
