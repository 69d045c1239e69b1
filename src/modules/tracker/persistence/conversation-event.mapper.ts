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

/** Events whose `name` is an action name (Rasa also files slot names there; we do not). */
const ACTION_EVENTS = new Set(['action', 'action_execution_rejected']);

/** Maps wire events to the filterable columns beside their JSON, as Rasa's SQL store does. */
export function toEventRows(events: readonly SerializedEvent[]): EventRows {
  const rows: EventRows = {
    types: [],
    timestamps: [],
    intents: [],
    actions: [],
    data: [],
    lastSessionStartIndex: -1,
    assistantId: null,
  };
  events.forEach((event, index) => {
    rows.types.push(event.event);
    const ts = event.timestamp;
    rows.timestamps.push(typeof ts === 'number' && Number.isFinite(ts) ? ts : 0);
    rows.intents.push(intentName(event));
    const action =
      ACTION_EVENTS.has(event.event) && typeof event.name === 'string' ? event.name : null;
    rows.actions.push(action);
    rows.data.push(JSON.stringify(event));
    if (rows.assistantId === null) rows.assistantId = assistantIdOf(event);
    if (event.event === 'action' && action === 'action_session_start') {
      rows.lastSessionStartIndex = index;
    }
  });
  return rows;
}

function intentName(event: SerializedEvent): string | null {
  if (event.event !== 'user') return null;
  const parse = event.parse_data as { intent?: { name?: unknown } } | undefined;
  const name = parse?.intent?.name;
  return typeof name === 'string' ? name : null;
}
import { type SerializedEvent } from 'src/core';

function assistantIdOf(event: SerializedEvent): string | null {
  const metadata = event.metadata as { assistant_id?: unknown } | undefined | null;
  const id = metadata?.assistant_id;
  return typeof id === 'string' && id.length > 0 ? id : null;
}
