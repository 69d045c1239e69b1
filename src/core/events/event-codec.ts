import { randomUUID } from 'node:crypto';
import { DialogueError } from 'src/core/errors/dialogue-error';
import { actionExecuted } from 'src/core/events/action-executed';
import { actionExecutionRejected } from 'src/core/events/action-execution-rejected';
import { actionReverted } from 'src/core/events/action-reverted';
import { activeLoop } from 'src/core/events/active-loop';
import { agentCancelled } from 'src/core/events/agent-cancelled';
import { agentCompleted } from 'src/core/events/agent-completed';
import { agentInterrupted } from 'src/core/events/agent-interrupted';
import { agentResumed } from 'src/core/events/agent-resumed';
import { agentStarted } from 'src/core/events/agent-started';
import { agentUttered } from 'src/core/events/agent-uttered';
import { allSlotsReset } from 'src/core/events/all-slots-reset';
import { botUttered } from 'src/core/events/bot-uttered';
import { conversationPaused } from 'src/core/events/conversation-paused';
import { conversationResumed } from 'src/core/events/conversation-resumed';
import { definePrevUserUtteredFeaturization } from 'src/core/events/define-prev-user-uttered-featurization';
import { type DialogueEvent } from 'src/core/events/dialogue-event';
import { dialogueStackUpdated } from 'src/core/events/dialogue-stack-updated';
import { entitiesAdded } from 'src/core/events/entities-added';
import { errorHandled } from 'src/core/events/error-handled';
import { type EventBase, type EventBaseInit, type JsonObject } from 'src/core/events/event-base';
import { flowCancelled } from 'src/core/events/flow-cancelled';
import { flowCompleted } from 'src/core/events/flow-completed';
import { flowInterrupted } from 'src/core/events/flow-interrupted';
import { flowResumed } from 'src/core/events/flow-resumed';
import { flowStarted } from 'src/core/events/flow-started';
import { followupAction } from 'src/core/events/followup-action';
import {
  isJsonObject,
  isTruthy,
  optionalNumber,
  optionalString,
} from 'src/core/events/json-values';
import { loopInterrupted } from 'src/core/events/loop-interrupted';
import { reminderCancelled } from 'src/core/events/reminder-cancelled';
import { reminderScheduled } from 'src/core/events/reminder-scheduled';
import { restarted } from 'src/core/events/restarted';
import { routingSessionEnded } from 'src/core/events/routing-session-ended';
import { type SerializedEvent } from 'src/core/events/serialized-event';
import { sessionEnded } from 'src/core/events/session-ended';
import { sessionStarted } from 'src/core/events/session-started';
import { slotSet } from 'src/core/events/slot-set';
import { storyExported } from 'src/core/events/story-exported';
import { userUtteranceReverted } from 'src/core/events/user-utterance-reverted';
import { userUttered } from 'src/core/events/user-uttered';

const COMMON_KEYS = new Set(['event', 'timestamp', 'metadata']);

function invalid(message: string, raw: unknown): never {
  throw new DialogueError('EVENTS.INVALID', message, { event: raw });
}

function entityList(value: unknown, what: string, raw: unknown): JsonObject[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) invalid(`${what} must be a list of entities.`, raw);
  return value.filter(isJsonObject);
}

function extrasOf(raw: JsonObject, known: readonly string[]): JsonObject {
  const extras: JsonObject = {};
  for (const [key, value] of Object.entries(raw)) {
    if (!COMMON_KEYS.has(key) && !known.includes(key)) extras[key] = value;
  }
  return extras;
}

/**
 * Python `dateutil` accepts many formats; we accept what `Date` parses and write it back the way
 * `datetime.isoformat()` would for the usual inputs (`Z` becomes `+00:00`).
 */
function isoDateTime(value: unknown, raw: unknown): string {
  if (typeof value !== 'string' || Number.isNaN(Date.parse(value))) {
    invalid(
      `Reminder 'date_time' must be an ISO 8601 date and time, got ${JSON.stringify(value)}.`,
      raw,
    );
  }
  return value.replace(' ', 'T').replace(/Z$/, '+00:00');
}

/**
 * Builds an event from its wire dict (Rasa's `Event.from_parameters`): unknown fields are dropped,
 * a missing/0/null timestamp becomes `now()`, missing metadata `{}`, legacy `form` and
 * `form_validation` become `active_loop` and `loop_interrupted`. Throws `EVENTS.INVALID` for a
 * dict that cannot be built (e.g. `action` with neither `name` nor `action_text`).
 */
export function deserializeEvent(
  raw: Record<string, unknown>,
  now: () => number,
  newId: () => string = randomUUID,
): DialogueEvent {
  const name = raw.event;
  if (typeof name !== 'string') invalid("Event dict has no 'event' name.", raw);
  const timestamp =
    typeof raw.timestamp === 'number' && raw.timestamp !== 0 ? raw.timestamp : now();
  if (raw.metadata !== undefined && raw.metadata !== null && !isJsonObject(raw.metadata)) {
    invalid("Event 'metadata' must be an object.", raw);
  }
  const base: EventBaseInit = {
    timestamp,
    metadata: isJsonObject(raw.metadata) ? raw.metadata : {},
  };
  const str = (key: string): string | null => optionalString(raw[key]);

  switch (name) {
    case 'user': {
      const parseData = raw.parse_data ?? {};
      if (!isJsonObject(parseData)) invalid("User event 'parse_data' must be an object.", raw);
      const intent = parseData.intent;
      if (intent !== undefined && intent !== null && !isJsonObject(intent)) {
        invalid("User event 'parse_data.intent' must be an object.", raw);
      }
      return userUttered({
        ...base,
        text: str('text'),
        intent: isJsonObject(intent) ? intent : {},
        entities: entityList(parseData.entities, "User event 'parse_data.entities'", raw),
        parseData,
        inputChannel: str('input_channel'),
        messageId: str('message_id'),
      });
    }
    case 'user_featurization': {
      const flag = raw.use_text_for_featurization;
      return definePrevUserUtteredFeaturization({
        ...base,
        useTextForFeaturization: typeof flag === 'boolean' ? flag : null,
      });
    }
    case 'entities':
      return entitiesAdded({ ...base, entities: entityList(raw.entities, "'entities'", raw) });
    case 'bot': {
      const data = raw.data ?? {};
      if (!isJsonObject(data)) invalid("Bot event 'data' must be an object.", raw);
      return botUttered({ ...base, text: str('text'), data });
    }
    case 'slot': {
      if (typeof raw.name !== 'string') invalid("Slot event needs a string 'name'.", raw);
      return slotSet({ ...base, name: raw.name, value: raw.value ?? null });
    }
    case 'reset_slots':
      return allSlotsReset(base);
    case 'restart':
      return restarted(base);
    case 'rewind':
      return userUtteranceReverted(base);
    case 'undo':
      return actionReverted(base);
    case 'session_started':
      return sessionStarted(base);
    case 'action':
      return actionExecuted({
        ...base,
        name: str('name'),
        policy: str('policy'),
        confidence: optionalNumber(raw.confidence),
        actionText: str('action_text'),
        hideRuleTurn: raw.hide_rule_turn === true,
      });
    case 'action_execution_rejected':
      return actionExecutionRejected({
        ...base,
        name: str('name'),
        policy: str('policy'),
        confidence: optionalNumber(raw.confidence),
      });
    case 'active_loop':
    case 'form':
      return activeLoop({ ...base, name: str('name') });
    case 'loop_interrupted':
      return loopInterrupted({ ...base, isInterrupted: isTruthy(raw.is_interrupted) });
    case 'form_validation':
      return loopInterrupted({
        ...base,
        isInterrupted: !isTruthy(raw.validate === undefined ? true : raw.validate),
      });
    case 'followup':
      return followupAction({ ...base, name: str('name') });
    case 'pause':
      return conversationPaused(base);
    case 'resume':
      return conversationResumed(base);
    case 'reminder':
      return reminderScheduled({
        ...base,
        intent: str('intent'),
        dateTime: isoDateTime(raw.date_time, raw),
        entities: raw.entities ?? null,
        name: str('name') ?? newId(),
        killOnUserMessage:
          raw.kill_on_user_msg === undefined ? true : isTruthy(raw.kill_on_user_msg),
      });
    case 'cancel_reminder':
      return reminderCancelled({
        ...base,
        name: str('name'),
        intent: str('intent'),
        entities: raw.entities ?? null,
      });
    case 'export':
      return storyExported({ ...base, path: str('path') });
    case 'agent':
      return agentUttered({ ...base, text: str('text'), data: raw.data ?? null });
    case 'stack': {
      const update = raw.update;
      let patch: unknown;
      try {
        patch = typeof update === 'string' ? JSON.parse(update) : undefined;
      } catch {
        patch = undefined;
      }
      if (typeof update !== 'string' || !Array.isArray(patch)) {
        invalid("Stack event 'update' must be a JSON string holding a JSON-Patch list.", raw);
      }
      return dialogueStackUpdated({ ...base, update });
    }
    case 'flow_started':
      return flowStarted({ ...base, flowId: str('flow_id') });
    case 'flow_interrupted':
      return flowInterrupted({ ...base, flowId: str('flow_id'), stepId: str('step_id') });
    case 'flow_resumed':
      return flowResumed({ ...base, flowId: str('flow_id'), stepId: str('step_id') });
    case 'flow_completed':
      return flowCompleted({ ...base, flowId: str('flow_id'), stepId: str('step_id') });
    case 'flow_cancelled':
      return flowCancelled({ ...base, flowId: str('flow_id'), stepId: str('step_id') });
    case 'agent_started':
      return agentStarted({
        ...base,
        agentId: str('agent_id'),
        flowId: str('flow_id'),
        extras: extrasOf(raw, ['agent_id', 'flow_id']),
      });
    case 'agent_completed':
      return agentCompleted({
        ...base,
        agentId: str('agent_id'),
        flowId: str('flow_id'),
        status: str('status'),
        extras: extrasOf(raw, ['agent_id', 'flow_id', 'status']),
      });
    case 'agent_interrupted':
      return agentInterrupted({
        ...base,
        agentId: str('agent_id'),
        flowId: str('flow_id'),
        extras: extrasOf(raw, ['agent_id', 'flow_id']),
      });
    case 'agent_resumed':
      return agentResumed({
        ...base,
        agentId: str('agent_id'),
        flowId: str('flow_id'),
        extras: extrasOf(raw, ['agent_id', 'flow_id']),
      });
    case 'agent_cancelled':
      return agentCancelled({
        ...base,
        agentId: str('agent_id'),
        flowId: str('flow_id'),
        reason: str('reason'),
        extras: extrasOf(raw, ['agent_id', 'flow_id', 'reason']),
      });
    case 'routing_session_ended':
      return routingSessionEnded({ ...base, extras: extrasOf(raw, []) });
    case 'session_ended':
      return sessionEnded({ ...base, extras: extrasOf(raw, []) });
    case 'error':
      return errorHandled({ ...base, extras: extrasOf(raw, []) });
    default:
      return invalid(`Unknown event name '${name}'.`, raw);
  }
}

/** Deserialises a list of wire events in order (see `deserializeEvent`). */
export function deserializeEvents(
  raws: readonly Record<string, unknown>[],
  now: () => number,
): DialogueEvent[] {
  return raws.map((raw) => deserializeEvent(raw, now));
}

/** `event`, `timestamp`, then `metadata` unless empty (Rasa `Event.as_dict`). */
function head(event: string, e: EventBase): SerializedEvent {
  const d: SerializedEvent = { event, timestamp: e.timestamp };
  if (hasKeys(e.metadata)) d.metadata = e.metadata;
  return d;
}

/** Whether the object has an own enumerable key (without building the key list). */
function hasKeys(o: object): boolean {
  for (const k in o) if (Object.prototype.hasOwnProperty.call(o, k)) return true;
  return false;
}

/**
 * Rasa's `as_dict()` per kind, key order included. `user` and `bot` always carry `metadata`:
 * right after `timestamp` when it is non-empty, else as the last key (Python's `dict.update`
 * keeps the position of a key already present).
 */
export function serializeEvent(e: DialogueEvent): SerializedEvent {
  // The events of every turn (user, action, bot) get their fields assigned one by one, with
  // no intermediate object to copy them from.
  if (e.type === 'user' || e.type === 'bot') {
    const d = head(e.type, e);
    d.text = e.text;
    if (e.type === 'user') {
      d.parse_data = e.parseData;
      d.input_channel = e.inputChannel;
      d.message_id = e.messageId;
    } else {
      d.data = e.data;
    }
    // Already in place after `timestamp` when non-empty, else the last key.
    d.metadata = e.metadata;
    return d;
  }
  if (e.type === 'action') {
    const d = head(e.type, e);
    d.name = e.name;
    d.policy = e.policy;
    d.confidence = e.confidence;
    d.action_text = e.actionText;
    d.hide_rule_turn = e.hideRuleTurn;
    return d;
  }
  const d = head(e.type, e);
  switch (e.type) {
    case 'user_featurization':
      return Object.assign(d, { use_text_for_featurization: e.useTextForFeaturization });
    case 'entities':
      return Object.assign(d, { entities: e.entities });
    case 'slot':
      return Object.assign(d, { name: e.name, value: e.value });
    case 'action_execution_rejected':
      return Object.assign(d, { name: e.name, policy: e.policy, confidence: e.confidence });
    case 'active_loop':
      return Object.assign(d, { name: e.name });
    case 'loop_interrupted':
      return Object.assign(d, { is_interrupted: e.isInterrupted });
    case 'followup':
      return Object.assign(d, { name: e.name });
    case 'reminder':
      return Object.assign(d, {
        intent: e.intent,
        date_time: e.dateTime,
        entities: e.entities,
        name: e.name,
        kill_on_user_msg: e.killOnUserMessage,
      });
    case 'agent':
      return Object.assign(d, { text: e.text, data: e.data });
    case 'stack':
      return Object.assign(d, { update: e.update });
    case 'flow_started':
      return Object.assign(d, { flow_id: e.flowId });
    case 'flow_interrupted':
    case 'flow_resumed':
    case 'flow_completed':
    case 'flow_cancelled':
      return Object.assign(d, { flow_id: e.flowId, step_id: e.stepId });
    case 'agent_started':
    case 'agent_interrupted':
    case 'agent_resumed':
      return Object.assign(d, { agent_id: e.agentId, flow_id: e.flowId }, e.extras);
    case 'agent_completed':
      return Object.assign(
        d,
        { agent_id: e.agentId, flow_id: e.flowId, status: e.status },
        e.extras,
      );
    case 'agent_cancelled':
      return Object.assign(
        d,
        { agent_id: e.agentId, flow_id: e.flowId, reason: e.reason },
        e.extras,
      );
    case 'routing_session_ended':
    case 'session_ended':
    case 'error':
      return Object.assign(d, e.extras);
    case 'reset_slots':
    case 'restart':
    case 'rewind':
    case 'undo':
    case 'session_started':
    case 'pause':
    case 'resume':
    case 'cancel_reminder':
    case 'export':
      return d;
  }
}

/** Serialises a list of events in order. */
export function serializeEvents(events: readonly DialogueEvent[]): SerializedEvent[] {
  return events.map(serializeEvent);
}
