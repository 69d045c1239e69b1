import { type Anonymizer } from 'src/core';
import { type BrokerMessage } from 'src/modules/event-broker/wire';
import { EventBroker, type PublishHeaders } from './event-broker';

/** A destination of anonymised copies and the rule list applied on the way. */
export interface AnonymizedTarget {
  readonly broker: EventBroker;
  readonly anonymizer: Anonymizer;
}

/**
 * Rasa Pro's `stream_pii` / `anonymization_queues` / `anonymization_topics` around a broker:
 * the original events go to the broker's own destinations only when `stream_pii` is true;
 * every anonymised destination gets copies with its rule list applied (same `event_id` and
 * `seq`, so consumers dedupe as usual). `publish` resolves once every destination confirmed;
 * a failure anywhere fails the batch, and the relay publishes it again (at least once).
 */
export class PiiBroker extends EventBroker {
  constructor(
    private readonly primary: EventBroker,
    private readonly streamPii: boolean,
    private readonly targets: readonly AnonymizedTarget[],
  ) {
    super();
  }

  get name(): string {
    return this.primary.name;
  }

  get target(): string {
    const parts = this.streamPii ? [this.primary.target] : [];
    for (const t of this.targets) parts.push(`anonymised: ${t.broker.target}`);
    return parts.length > 0 ? parts.join('; ') : `${this.primary.target} (stream_pii false)`;
  }

  private active(): EventBroker[] {
    return [...(this.streamPii ? [this.primary] : []), ...this.targets.map((t) => t.broker)];
  }

  async connect(): Promise<void> {
    for (const b of this.active()) await b.connect();
  }

  /** `raise_on_failure`: each part with its own retries (pika) or once. */
  async connectWithRetries(): Promise<void> {
    for (const b of this.active()) {
      const retrying = b as EventBroker & { connectWithRetries?: () => Promise<void> };
      await (retrying.connectWithRetries ? retrying.connectWithRetries() : b.connect());
    }
  }

  async publish(messages: readonly BrokerMessage[], headers?: PublishHeaders): Promise<void> {
    if (this.streamPii) await this.primary.publish(messages, headers);
    for (const t of this.targets) {
      await t.broker.publish(anonymizeMessages(messages, t.anonymizer), headers);
    }
  }

  async close(): Promise<void> {
    await Promise.all([this.primary, ...this.targets.map((t) => t.broker)].map((b) => b.close()));
  }
}

/** The anonymised copies, each conversation's events through the anonymiser together, in order. */
export function anonymizeMessages(
  messages: readonly BrokerMessage[],
  anonymizer: Anonymizer,
): BrokerMessage[] {
  const byConversation = new Map<string, number[]>();
  messages.forEach((m, i) => {
    const list = byConversation.get(m.conversationId);
    if (list === undefined) byConversation.set(m.conversationId, [i]);
    else list.push(i);
  });
  const out: BrokerMessage[] = [...messages];
  for (const indexes of byConversation.values()) {
    const bodies = indexes.map(
      (i) => JSON.parse((messages[i] as BrokerMessage).body) as Record<string, unknown>,
    );
    anonymizer.anonymizeEvents(bodies).forEach((body, k) => {
      const i = indexes[k] as number;
      out[i] = { ...(messages[i] as BrokerMessage), body: JSON.stringify(body) };
    });
  }
  return out;
}
