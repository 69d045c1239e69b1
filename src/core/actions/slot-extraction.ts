import { type Domain } from 'src/core/domain/domain';
import { REQUESTED_SLOT, SESSION_START_METADATA_SLOT } from 'src/core/domain/domain-constants';
import { type JsonObject } from 'src/core/events/event-base';
import { isJsonObject } from 'src/core/events/json-values';
import { slotSet, type SlotSet } from 'src/core/events/slot-set';
import { type DialogueStateTracker } from 'src/core/tracker/dialogue-state-tracker';

function asList(value: unknown): string[] {
  if (value === undefined || value === null) return [];
  return (Array.isArray(value) ? value : [value]).map(String);
}

/** The form's `ignored_intents` as a list. */
export function formIgnoredIntents(domain: Domain, form: string | null): string[] {
  if (form === null) return [];
  return asList(domain.forms[form]?.ignored_intents);
}

/** A form's required slots as declared. */
export function requiredSlots(domain: Domain, form: string): string[] {
  const slots = domain.forms[form]?.required_slots;
  return Array.isArray(slots) ? slots.map(String) : [];
}

/**
 * Rasa's `action_extract_slots` for the predefined mappings (`from_entity`, `from_intent`,
 * `from_trigger_intent`, `from_text`): for every declared slot the first applicable mapping
 * that yields a value sets it. Honours `intent` / `not_intent`, the active form's
 * `ignored_intents` and `conditions` (active loop and requested slot). `custom` mappings are
 * left to custom actions.
 */
export function extractSlots(
  domain: Domain,
  tracker: DialogueStateTracker,
  now: number,
): SlotSet[] {
  const events: SlotSet[] = [];
  const message = tracker.latestMessage;
  const intent = typeof message.intent.name === 'string' ? message.intent.name : null;
  const loop = tracker.activeLoopName;
  const requested = tracker.getSlot(REQUESTED_SLOT);
  const rejected = tracker.activeLoop?.rejected ?? false;
  const ignored = formIgnoredIntents(domain, loop);
  for (const slot of domain.userSlots) {
    if (slot.name === REQUESTED_SLOT || slot.name === SESSION_START_METADATA_SLOT) continue;
    for (const mapping of slot.mappings) {
      const conditions = Array.isArray(mapping.conditions)
        ? mapping.conditions.filter(isJsonObject)
        : [];
      const wanted = asList(mapping.intent);
      if (wanted.length > 0) {
        if (intent === null || !wanted.includes(intent)) continue;
      } else {
        const mentionsLoop =
          conditions.length === 0 || conditions.some((c) => c.active_loop === loop);
        const unwanted = [
          ...asList(mapping.not_intent),
          ...(loop !== null && mentionsLoop ? ignored : []),
        ];
        if (intent !== null && unwanted.includes(intent)) continue;
      }
      if (mapping.type !== 'from_trigger_intent' && conditions.length > 0) {
        if (rejected && requested === slot.name) continue;
        const ok = conditions.some(
          (c) =>
            (c.active_loop ?? null) === loop &&
            (c.requested_slot === undefined || c.requested_slot === requested),
        );
        if (!ok) continue;
      }
      const values = valuesOf(mapping, tracker, loop, conditions);
      if (values.length === 0) continue;
      const value = slot.type === 'list' ? values : values[values.length - 1];
      if ((value === null || value === undefined) && tracker.getSlot(slot.name) === null) continue;
      events.push(slotSet({ name: slot.name, value, timestamp: now }));
      break;
    }
  }
  return events;
}

function valuesOf(
  mapping: JsonObject,
  tracker: DialogueStateTracker,
  loop: string | null,
  conditions: JsonObject[],
): unknown[] {
  switch (mapping.type) {
    case 'from_entity':
      return tracker.latestMessageEntities
        .filter(
          (e) =>
            e.entity === mapping.entity &&
            (e.role ?? null) === (mapping.role ?? null) &&
            (e.group ?? null) === (mapping.group ?? null),
        )
        .map((e) => e.value);
    case 'from_intent':
      return [mapping.value ?? null];
    case 'from_trigger_intent':
      if (loop === null) return [];
      if (conditions.length > 0 && !conditions.some((c) => c.active_loop === loop)) return [];
      return [mapping.value ?? null];
    case 'from_text':
      return tracker.latestMessage.text === null ? [] : [tracker.latestMessage.text];
    default:
      return [];
  }
}
