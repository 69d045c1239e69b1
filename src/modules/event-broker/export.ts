import { randomUUID } from 'node:crypto';
import { type EventOutbox, type ExportFilter } from 'src/modules/tracker';
import { type EventBroker } from './brokers/event-broker';
import { toBrokerMessage } from './wire';

export interface ExportResult {
  readonly events: number;
  readonly conversations: number;
  /** The `rasa-export-process-id` header of every message of this export. */
  readonly processId: string;
}

/**
 * `parley export` (Rasa's `rasa export`): publishes the stored events that match `filter` to
 * the broker, per conversation in seq order, in the same flat shape (and the same `event_id`s)
 * as the relay, each message with the header `rasa-export-process-id`. Re-exporting duplicates
 * downstream unless consumers dedupe by `event_id`.
 */
export async function exportToBroker(
  outbox: EventOutbox,
  broker: EventBroker,
  filter: ExportFilter,
  pageSize = 1000,
): Promise<ExportResult> {
  const processId = randomUUID();
  let events = 0;
  const conversations = new Set<string>();
  for await (const page of outbox.exportEvents(filter, pageSize)) {
    await broker.publish(page.map(toBrokerMessage), { 'rasa-export-process-id': processId });
    events += page.length;
    for (const e of page) conversations.add(e.conversationId);
  }
  return { events, conversations: conversations.size, processId };
}
