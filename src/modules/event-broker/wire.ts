import { createHash } from 'node:crypto';
import { type OutboxEvent } from 'src/modules/tracker';

/** One event ready for a broker. */
export interface BrokerMessage {
  readonly conversationId: string;
  readonly seq: number;
  /** Stable id: the same for every publication of the same stored event (dedupe key). */
  readonly eventId: string;
  /** Rasa's flat shape as JSON: `{"sender_id": …, …event}`. */
  readonly body: string;
}

/**
 * A deterministic UUID (version 5 layout, SHA-1) of a stored event: conversation id, the
 * conversation row's generation (a re-created conversation reuses seq numbers) and seq. A relay
 * retry or `parley export` of the same event yields the same id.
 */
export function eventIdOf(conversationId: string, generation: string, seq: number): string {
  const h = createHash('sha1').update(`${conversationId}\u0000${generation}\u0000${seq}`).digest();
  h[6] = ((h[6] as number) & 0x0f) | 0x50;
  h[8] = ((h[8] as number) & 0x3f) | 0x80;
  const x = h.subarray(0, 16).toString('hex');
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20)}`;
}

/**
 * The message of a stored event in Rasa's legacy flat shape: `sender_id` first, then the event
 * exactly as the tracker API serialises it (float-second timestamps, `metadata.model_id` /
 * `assistant_id` as stored), with `event_id` and `seq` added inside `metadata` — a key legacy
 * consumers (Rasa Analytics, Studio) do not interpret.
 */
export function toBrokerMessage(event: OutboxEvent): BrokerMessage {
  const eventId = eventIdOf(event.conversationId, event.generation, event.seq);
  const parsed = JSON.parse(event.data) as Record<string, unknown>;
  const metadata =
    typeof parsed.metadata === 'object' &&
    parsed.metadata !== null &&
    !Array.isArray(parsed.metadata)
      ? (parsed.metadata as Record<string, unknown>)
      : {};
  const body = JSON.stringify({
    sender_id: event.conversationId,
    ...parsed,
    metadata: { ...metadata, event_id: eventId, seq: event.seq },
  });
  return { conversationId: event.conversationId, seq: event.seq, eventId, body };
}

/** `RASA_ENVIRONMENT` as Rasa sends it (Kafka header; RabbitMQ `app_id` when set). */
export function rasaEnvironment(): string | null {
  const value = process.env.RASA_ENVIRONMENT;
  return value === undefined || value === '' ? null : value;
}
