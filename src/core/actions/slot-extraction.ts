import {
  ActionExecutionRejection,
  ActionServerError,
  type ActionContext,
} from 'src/core/actions/action';
import { RemoteAction } from 'src/core/actions/remote-action';
import { stableStringify } from 'src/core/dialogue/dialogue-state';
import { type Domain } from 'src/core/domain/domain';
import {
  ACTION_EXTRACT_SLOTS,
  ACTION_VALIDATE_SLOT_MAPPINGS,
  REQUESTED_SLOT,
  SESSION_START_METADATA_SLOT,
} from 'src/core/domain/domain-constants';
import { type DialogueEvent } from 'src/core/events/dialogue-event';
import { type JsonObject } from 'src/core/events/event-base';
import { isJsonObject, jsonEqual } from 'src/core/events/json-values';
import { slotSet, type SlotSet } from 'src/core/events/slot-set';
import { DialogueStateTracker } from 'src/core/tracker/dialogue-state-tracker';

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

/** One outcome of walking the slot mappings: a slot value, or a custom action to run. */
type MappingStep =
  | { readonly kind: 'slot'; readonly event: SlotSet }
  | { readonly kind: 'custom'; readonly action: string };

/**
 * Rasa's `action_extract_slots` for the predefined mappings (`from_entity`, `from_intent`,
 * `from_trigger_intent`, `from_text`): for every declared slot the first applicable mapping
 * that yields a value sets it. Honours `intent` / `not_intent`, the active form's
 * `ignored_intents` and `conditions` (active loop and requested slot). `custom` mappings need
 * the action server: `runActionExtractSlots` runs them.
 */
export function extractSlots(
  domain: Domain,
  tracker: DialogueStateTracker,
  now: number,
): SlotSet[] {
  return mappingSteps(domain, tracker, now).flatMap((s) => (s.kind === 'slot' ? [s.event] : []));
}

/**
 * The whole of Rasa's `action_extract_slots`: the predefined mappings, then (in mapping order)
 * each applicable `custom` mapping's `action` run once on the action server; only its `slot`
 * events that change a value are kept (Rasa drops its bot messages and other events). Finally,
 * when the domain lists `action_validate_slot_mappings`, that action is called with the
 * candidate `slot` events appended to the conversation (rasa-sdk's `ValidationAction` reads them
 * as `slots_to_validate`): its value-changing `slot` events and its bot messages are kept, plus
 * the candidates it did not mention (`SlotSet(x, null)` rejects one). A failing custom action is
 * logged and contributes nothing. `custom` mappings without `action` are left to forms'
 * `validate_<form>`.
 */
export async function runActionExtractSlots(ctx: ActionContext): Promise<DialogueEvent[]> {
  const events: DialogueEvent[] = [];
  const executed = new Set<string>();
  for (const step of mappingSteps(ctx.domain, ctx.tracker, ctx.now())) {
    if (step.kind === 'slot') {
      events.push(step.event);
    } else if (!executed.has(step.action)) {
      executed.add(step.action);
      events.push(...(await runSlotAction(step.action, ctx, ctx.tracker)));
    }
  }
  return validateExtraction(events, ctx);
}

/** Runs a custom action for slot filling; keeps only its value-changing `slot` and `bot` events. */
async function runSlotAction(
  name: string,
  ctx: ActionContext,
  tracker: DialogueStateTracker,
): Promise<DialogueEvent[]> {
  let returned: DialogueEvent[];
  try {
    returned = await new RemoteAction(name).run({ ...ctx, tracker });
  } catch (error) {
    if (!(error instanceof ActionServerError) && !(error instanceof ActionExecutionRejection)) {
      throw error;
    }
    ctx.warn?.(
      `Failed to execute custom action '${name}' as a result of error '${error.message}'. The default action '${ACTION_EXTRACT_SLOTS}' failed to fill slots with custom mappings.`,
      { action: name },
    );
    return [];
  }
  const kept: DialogueEvent[] = [];
  const dropped = new Set<string>();
  for (const e of returned) {
    if (e.type === 'slot') {
      if (!jsonEqual(tracker.getSlot(e.name) ?? null, e.value ?? null)) kept.push(e);
    } else if (e.type === 'bot') {
      kept.push(e);
    } else {
      dropped.add(e.type);
    }
  }
  for (const type of dropped) {
    ctx.warn?.(
      `Running custom action '${name}' has resulted in an event of type '${type}'. This is disallowed and the tracker will not be updated with this event.`,
      { action: name, event: type },
    );
  }
  return kept;
}

/** `action_validate_slot_mappings` over the extracted `slot` events (as Rasa, other events are dropped). */
async function validateExtraction(
  extracted: readonly DialogueEvent[],
  ctx: ActionContext,
): Promise<DialogueEvent[]> {
  const candidates = extracted.filter((e): e is SlotSet => e.type === 'slot');
  if (!ctx.domain.userActions.includes(ACTION_VALIDATE_SLOT_MAPPINGS)) return candidates;
  const tracker = new DialogueStateTracker(ctx.tracker.senderId, ctx.domain.slots);
  for (const e of ctx.tracker.eventsAfterLatestRestart()) tracker.update(e);
  for (const e of candidates) tracker.update(e);
  const validated = await runSlotAction(ACTION_VALIDATE_SLOT_MAPPINGS, ctx, tracker);
  const mentioned = new Set(validated.flatMap((e) => (e.type === 'slot' ? [e.name] : [])));
  return [...validated, ...candidates.filter((e) => !mentioned.has(e.name))];
}

function mappingSteps(domain: Domain, tracker: DialogueStateTracker, now: number): MappingStep[] {
  const steps: MappingStep[] = [];
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
      if (
        mapping.type === 'from_entity' &&
        loop !== null &&
        requested !== slot.name &&
        requiredSlots(domain, loop).includes(slot.name) &&
        !uniqueEntityMappings(domain, loop).has(stableStringify(mapping))
      ) {
        // Rasa's unique-entity check: inside a form, an entity that several of the form's
        // slots map the same way fills only the slot the form asks for.
        continue;
      }
      if (mapping.type === 'custom') {
        // Rasa runs the mapping's action (if any) and goes on with the slot's next mapping.
        if (typeof mapping.action === 'string' && mapping.action !== '') {
          steps.push({ kind: 'custom', action: mapping.action });
        }
        continue;
      }
      const values = valuesOf(mapping, tracker, loop, conditions);
      if (values.length === 0) continue;
      const value = slot.type === 'list' ? values : values[values.length - 1];
      if ((value === null || value === undefined) && tracker.getSlot(slot.name) === null) continue;
      steps.push({ kind: 'slot', event: slotSet({ name: slot.name, value, timestamp: now }) });
      break;
    }
  }
  return steps;
}

const uniqueMappings = new WeakMap<Domain, Map<string, ReadonlySet<string>>>();

/**
 * The `from_entity` mappings (as sorted-key JSON) that only one of a form's required slots has,
 * counting each slot's mappings (Rasa `FormAction.entity_mapping_is_unique`).
 */
function uniqueEntityMappings(domain: Domain, form: string): ReadonlySet<string> {
  let byForm = uniqueMappings.get(domain);
  if (byForm === undefined) {
    byForm = new Map();
    uniqueMappings.set(domain, byForm);
  }
  let unique = byForm.get(form);
  if (unique === undefined) {
    const seen = new Set<string>();
    const duplicated = new Set<string>();
    for (const name of requiredSlots(domain, form)) {
      for (const mapping of domain.slot(name)?.mappings ?? []) {
        if (mapping.type !== 'from_entity') continue;
        const key = stableStringify(mapping);
        if (seen.has(key)) duplicated.add(key);
        seen.add(key);
      }
    }
    unique = new Set([...seen].filter((k) => !duplicated.has(k)));
    byForm.set(form, unique);
  }
  return unique;
}

/** The values of the entities a `from_entity` mapping takes (entity, role and group match). */
export function fromEntityValues(entities: readonly JsonObject[], mapping: JsonObject): unknown[] {
  return entities
    .filter(
      (e) =>
        e.entity === mapping.entity &&
        (e.role ?? null) === (mapping.role ?? null) &&
        (e.group ?? null) === (mapping.group ?? null),
    )
    .map((e) => e.value);
}

function valuesOf(
  mapping: JsonObject,
  tracker: DialogueStateTracker,
  loop: string | null,
  conditions: JsonObject[],
): unknown[] {
  switch (mapping.type) {
    case 'from_entity':
      return fromEntityValues(tracker.latestMessageEntities, mapping);
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
