import { type Domain } from 'src/core/domain/domain';
import { type SlotDefinition } from 'src/core/domain/slot-definition';
import { type JsonObject } from 'src/core/events/event-base';
import { slotSet, type SlotSet } from 'src/core/events/slot-set';
import { type UserUttered } from 'src/core/events/user-uttered';

/** What `action_extract_slots` needs to know of the conversation. */
export interface SlotExtractionContext {
  /** The user message just received. */
  readonly message: UserUttered;
  /** Current value of a slot. */
  readonly slotValue: (name: string) => unknown;
  /** Name of the active loop (form), or null. */
  readonly activeLoop: string | null;
  readonly now: number;
}

/**
 * Rasa's `action_extract_slots` for the predefined mappings: `from_entity` (with role, group,
 * intent / not_intent), `from_intent` and `from_text`, honouring `conditions` on the active loop
 * and requested slot. A slot event is emitted only when the value changes. Custom mappings are
 * left to custom actions, as in Rasa.
 */
export function extractSlotEvents(domain: Domain, ctx: SlotExtractionContext): SlotSet[] {
  const events: SlotSet[] = [];
  for (const slot of domain.userSlots) {
    let value: unknown = undefined;
    for (const mapping of slot.mappings) {
      if (!conditionsHold(mapping, ctx) || !intentAllowed(mapping, ctx.message)) continue;
      const extracted = extract(mapping, slot, ctx.message);
      if (extracted !== undefined) value = extracted;
    }
    if (value !== undefined && !sameValue(value, ctx.slotValue(slot.name))) {
      events.push(slotSet({ name: slot.name, value, timestamp: ctx.now }));
    }
  }
  return events;
}

function extract(mapping: JsonObject, slot: SlotDefinition, message: UserUttered): unknown {
  switch (mapping.type) {
    case 'from_entity': {
      const values = message.entities
        .filter(
          (e) =>
            e.entity === mapping.entity &&
            (mapping.role === undefined || e.role === mapping.role) &&
            (mapping.group === undefined || e.group === mapping.group),
        )
        .map((e) => e.value);
      if (values.length === 0) return undefined;
      return slot.type === 'list' ? values : values[values.length - 1];
    }
    case 'from_intent':
      return 'value' in mapping ? mapping.value : undefined;
    case 'from_text':
      return message.text ?? undefined;
    default:
      return undefined;
  }
}

function asList(value: unknown): string[] | null {
  if (value === undefined || value === null) return null;
  return (Array.isArray(value) ? value : [value]).map(String);
}

function intentAllowed(mapping: JsonObject, message: UserUttered): boolean {
  const intent = typeof message.intent.name === 'string' ? message.intent.name : null;
  const wanted = asList(mapping.intent);
  const unwanted = asList(mapping.not_intent) ?? [];
  if (wanted !== null && (intent === null || !wanted.includes(intent))) return false;
  return intent === null || !unwanted.includes(intent);
}

function conditionsHold(mapping: JsonObject, ctx: SlotExtractionContext): boolean {
  const conditions = mapping.conditions;
  if (!Array.isArray(conditions) || conditions.length === 0) return true;
  return conditions.some((c) => {
    if (typeof c !== 'object' || c === null || Array.isArray(c)) return false;
    const cond = c as JsonObject;
    if (cond.active_loop !== undefined && cond.active_loop !== ctx.activeLoop) return false;
    if (
      cond.requested_slot !== undefined &&
      cond.requested_slot !== ctx.slotValue('requested_slot')
    ) {
      return false;
    }
    return true;
  });
}

function sameValue(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}
