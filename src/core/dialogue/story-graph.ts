import { type Domain } from 'src/core/domain/domain';
import { ACTION_LISTEN_NAME } from 'src/core/domain/domain-constants';
import { actionExecuted } from 'src/core/events/action-executed';
import { activeLoop } from 'src/core/events/active-loop';
import { type DialogueEvent } from 'src/core/events/dialogue-event';
import { type JsonObject } from 'src/core/events/event-base';
import { slotSet } from 'src/core/events/slot-set';
import { userUttered } from 'src/core/events/user-uttered';
import {
  RULE_SNIPPET_ACTION_NAME,
  type StoryBlock,
  type StoryStepItem,
} from 'src/core/training-data/stories-yaml-reader';

/** A story or rule turned into the events of one training conversation. */
export interface TrainingTracker {
  readonly name: string;
  readonly isRule: boolean;
  readonly file: string;
  readonly line: number | undefined;
  readonly events: DialogueEvent[];
  /** User messages in the rule's steps (for `restrict_rules`). */
  readonly userTurns: number;
}

/** Most conversations one story graph may unfold into (checkpoint loops, `or` fan-out). */
const MAX_TRACKERS = 20000;
const MAX_CHECKPOINT_DEPTH = 20;

interface Segment {
  readonly block: StoryBlock;
  readonly start: readonly string[];
  readonly end: readonly string[];
  readonly items: readonly StoryStepItem[];
}

/** Every combination of `or` alternatives of a step list. */
function expandOr(items: readonly StoryStepItem[]): StoryStepItem[][] {
  let out: StoryStepItem[][] = [[]];
  for (const item of items) {
    if (item.kind !== 'or') {
      for (const seq of out) seq.push(item);
      continue;
    }
    const next: StoryStepItem[][] = [];
    for (const seq of out) {
      for (const alt of item.alternatives) {
        for (const expanded of expandOr(alt)) next.push([...seq, ...expanded]);
        if (next.length > MAX_TRACKERS) break;
      }
    }
    out = next;
  }
  return out;
}

/** Splits a step list at its checkpoints into linked segments. */
function segmentsOf(block: StoryBlock, items: StoryStepItem[], n: number): Segment[] {
  const segments: Segment[] = [];
  let start: string[] = [];
  let current: StoryStepItem[] = [];
  let i = 0;
  while (i < items.length) {
    const item = items[i] as StoryStepItem;
    if (item.kind !== 'checkpoint') {
      current.push(item);
      i++;
      continue;
    }
    const names: string[] = [];
    while (i < items.length && (items[i] as StoryStepItem).kind === 'checkpoint') {
      names.push((items[i] as { name: string }).name);
      i++;
    }
    if (current.length === 0 && segments.length === 0 && start.length === 0) {
      start = names;
      continue;
    }
    if (i >= items.length) {
      segments.push({ block, start, end: names, items: current });
      return segments;
    }
    const link = `__${block.name}_${n}_${segments.length}__`;
    segments.push({ block, start, end: [...names, link], items: current });
    start = [link];
    current = [];
  }
  segments.push({ block, start, end: [], items: current });
  return segments;
}

/**
 * Unfolds stories and rules into training conversations (Rasa's story graph without
 * augmentation): `or` steps fan out, checkpoints join segments, `action_listen` goes before
 * every user message and at the end of a story; rules get their conditions, `...` and the final
 * `action_listen` (or `...` with `wait_for_user_input: false`).
 */
export function trainingTrackers(blocks: readonly StoryBlock[], domain: Domain): TrainingTracker[] {
  const segments: Segment[] = [];
  blocks.forEach((block, b) => {
    expandOr(block.steps).forEach((items, k) => {
      segments.push(...segmentsOf(block, items, b * 1000 + k));
    });
  });
  const byStart = new Map<string, Segment[]>();
  for (const s of segments) {
    for (const name of s.start) byStart.set(name, [...(byStart.get(name) ?? []), s]);
  }
  const out: TrainingTracker[] = [];
  const walk = (seg: Segment, prefix: StoryStepItem[], depth: number): void => {
    if (out.length >= MAX_TRACKERS) return;
    const items = [...prefix, ...seg.items];
    const nexts = seg.end.flatMap((name) => byStart.get(name) ?? []);
    if (nexts.length === 0 || depth >= MAX_CHECKPOINT_DEPTH) {
      out.push(toTracker(seg.block, items, domain, seg.end.length > 0 && nexts.length > 0));
      return;
    }
    for (const next of nexts) walk(next, items, depth + 1);
  };
  for (const s of segments) if (s.start.length === 0) walk(s, [], 0);
  return out;
}

function toTracker(
  block: StoryBlock,
  items: readonly StoryStepItem[],
  domain: Domain,
  truncated: boolean,
): TrainingTracker {
  const events: DialogueEvent[] = [];
  let t = 0;
  const ts = (): number => (t += 1);
  const lastIsListen = (): boolean => {
    const last = events[events.length - 1];
    return last?.type === 'action' && last.name === ACTION_LISTEN_NAME;
  };
  const listen = (): void => {
    if (!lastIsListen()) events.push(actionExecuted({ name: ACTION_LISTEN_NAME, timestamp: ts() }));
  };
  let userTurns = 0;
  const add = (item: StoryStepItem): void => {
    switch (item.kind) {
      case 'user': {
        listen();
        userTurns++;
        const intent: JsonObject =
          item.intent === null
            ? {}
            : {
                name: item.intent,
                confidence: 1.0,
                ...(item.fullRetrievalIntent
                  ? { full_retrieval_intent_name: item.fullRetrievalIntent }
                  : {}),
              };
        const user = userUttered({
          text: item.text,
          intent,
          entities: item.entities,
          timestamp: ts(),
        });
        events.push(user);
        for (const s of slotsForEntities(domain, item.entities)) {
          events.push(slotSet({ name: s.name, value: s.value, timestamp: ts() }));
        }
        return;
      }
      case 'action':
        events.push(actionExecuted({ name: item.name, timestamp: ts() }));
        return;
      case 'bot':
        events.push(actionExecuted({ actionText: item.text, timestamp: ts() }));
        return;
      case 'slot':
        events.push(slotSet({ name: item.name, value: item.value, timestamp: ts() }));
        return;
      case 'active_loop':
        events.push(activeLoop({ name: item.name, timestamp: ts() }));
        return;
      case 'checkpoint':
      case 'or':
        return;
    }
  };
  if (block.isRule) {
    for (const c of block.conditions) add(c);
    if (!block.conversationStart) {
      events.push(actionExecuted({ name: RULE_SNIPPET_ACTION_NAME, timestamp: ts() }));
    }
  }
  for (const item of items) add(item);
  if (block.isRule) {
    if (block.waitForUserInput) listen();
    else events.push(actionExecuted({ name: RULE_SNIPPET_ACTION_NAME, timestamp: ts() }));
  } else if (!truncated) {
    listen();
  }
  return {
    name: block.name,
    isRule: block.isRule,
    file: block.file,
    line: block.line,
    events,
    userTurns,
  };
}

/** Rasa's `Domain.slots_for_entities`: slots with an unconditional `from_entity` mapping. */
export function slotsForEntities(
  domain: Domain,
  entities: readonly JsonObject[],
): { name: string; value: unknown }[] {
  if (!domain.storeEntitiesAsSlots) return [];
  const out: { name: string; value: unknown }[] = [];
  for (const slot of domain.slots) {
    const values: unknown[] = [];
    for (const m of slot.mappings) {
      const conditions = m.conditions;
      if (m.type !== 'from_entity') continue;
      if (Array.isArray(conditions) && conditions.length > 0) {
        const first = conditions[0] as JsonObject | undefined;
        if (first && first.active_loop !== undefined && first.active_loop !== null) continue;
      }
      for (const e of entities) {
        if (
          e.entity === m.entity &&
          (e.role ?? null) === (m.role ?? null) &&
          (e.group ?? null) === (m.group ?? null)
        ) {
          values.push(e.value);
        }
      }
    }
    if (values.length > 0) {
      out.push({
        name: slot.name,
        value: slot.type === 'list' ? values : values[values.length - 1],
      });
    }
  }
  return out;
}
