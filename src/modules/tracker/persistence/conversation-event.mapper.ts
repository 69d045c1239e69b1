import { encodeWireEvent, type EncodedEvent, type SerializedEvent } from 'src/core';

/** Column arrays for one batch insert of events (`unnest` parameters). */
export interface EventRows {
  types: string[];
  timestamps: number[];
  intents: Array<string | null>;
  actions: Array<string | null>;
  data: string[];
  lastSessionStartIndex: number;
  /** `metadata.assistant_id` of the first event carrying one (the conversation's assistant). */
  assistantId: string | null;
}

/**
 * Maps encoded events to the filterable columns beside their JSON, as Rasa's SQL store does
 * (`action_name` holds action names only: Rasa also files slot names there; we do not).
 */
export function toEventRows(events: readonly EncodedEvent[]): EventRows {
  const rows: EventRows = {
    types: [],
    timestamps: [],
    intents: [],
    actions: [],
    data: [],
    lastSessionStartIndex: -1,
    assistantId: null,
  };
  for (let index = 0; index < events.length; index++) {
    const event = events[index] as EncodedEvent;
    rows.types.push(event.type);
    const ts = event.timestamp;
    rows.timestamps.push(typeof ts === 'number' && Number.isFinite(ts) ? ts : 0);
    rows.intents.push(event.intent);
    rows.actions.push(event.action);
    rows.data.push(event.json);
    if (rows.assistantId === null) rows.assistantId = event.assistantId;
    if (event.type === 'action' && event.action === 'action_session_start') {
      rows.lastSessionStartIndex = index;
    }
  }
  return rows;
}

/** The same for wire events (the tracker routes' appends and replacements). */
export function wireEventRows(events: readonly SerializedEvent[]): EventRows {
  return toEventRows(events.map(encodeWireEvent));
}
