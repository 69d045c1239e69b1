import {
  Inject,
  Injectable,
  Logger,
  OnModuleDestroy,
  OnModuleInit,
  Optional,
} from '@nestjs/common';
import { ReadinessChecks } from 'src/platform/health/readiness-checks';
import { type EventBroker } from './brokers/event-broker';
import { PiiBroker } from './brokers/pii-broker';
import { PikaBroker } from './brokers/pika-broker';
import { type OutboxRelay } from './outbox-relay';

/** DI token: the configured broker and its relay, or null (no `event_broker`). */
export const EVENT_BROKER_SETUP = Symbol('EVENT_BROKER_SETUP');

export interface EventBrokerSetup {
  readonly broker: EventBroker;
  readonly relay: OutboxRelay;
  /** `raise_on_failure` (pika): start-up fails when the broker cannot be reached. */
  readonly raiseOnFailure: boolean;
}

/** How long closing the application waits for the outbox to drain. */
const SHUTDOWN_FLUSH_MS = 5_000;

/**
 * The event broker of endpoints.yml at run time: starts the outbox relay, and on shutdown
 * flushes it (bounded) and closes the broker connection. `flush(timeoutMs)` is public for the
 * graceful shutdown (SIGTERM) to call before the HTTP server closes.
 */
@Injectable()
export class EventBrokerService implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger('EventBroker');

  constructor(
    @Inject(EVENT_BROKER_SETUP) private readonly setup: EventBrokerSetup | null,
    @Optional() private readonly readiness?: ReadinessChecks,
  ) {}

  /** Whether endpoints.yml configures a broker. */
  get configured(): boolean {
    return this.setup !== null;
  }

  async onModuleInit(): Promise<void> {
    if (this.setup === null) return;
    const { broker, relay, raiseOnFailure } = this.setup;
    if (raiseOnFailure) {
      try {
        await (broker instanceof PikaBroker || broker instanceof PiiBroker
          ? broker.connectWithRetries()
          : broker.connect());
      } catch (error) {
        throw new Error(
          `event_broker ${broker.name} (${broker.target}) is not reachable and raise_on_failure is set: ${error instanceof Error ? error.message : String(error)}`,
        );
      }
    } else {
      broker
        .connect()
        .catch((error: unknown) =>
          this.logger.warn(
            { broker: broker.target, err: error instanceof Error ? error.message : String(error) },
            'event broker not reachable yet; events wait in the outbox',
          ),
        );
    }
    relay.start();
    // A warning on /health/ready, never a reason to take the instance out of the load balancer:
    // turns go on while the broker is down, and the outbox keeps their events.
    this.readiness?.register(
      'event_broker',
      () =>
        relay.consecutiveFailures === 0
          ? Promise.resolve()
          : Promise.reject(
              new Error(
                `${relay.consecutiveFailures} failed publish attempts; events wait in the outbox`,
              ),
            ),
      { critical: false },
    );
    this.logger.log({ broker: broker.name, target: broker.target }, 'event broker configured');
  }

  /**
   * Publishes what the outbox holds and resolves true once it is empty, false when `timeoutMs`
   * ran out first (nothing is lost: the rows stay for the next start or another instance).
   */
  async flush(timeoutMs: number): Promise<boolean> {
    if (this.setup === null) return true;
    return this.setup.relay.flush(timeoutMs);
  }

  async onModuleDestroy(): Promise<void> {
    if (this.setup === null) return;
    const { broker, relay } = this.setup;
    const drained = await relay.flush(SHUTDOWN_FLUSH_MS);
    if (!drained) {
      this.logger.warn(
        { broker: broker.target },
        'event broker outbox not drained at shutdown; the rest is published after the next start',
      );
    }
    await relay.stop();
    await broker.close();
  }
}
