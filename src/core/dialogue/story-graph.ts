import { type Domain } from 'src/core/domain/domain';
import { ACTION_LISTEN_NAME } from 'src/core/domain/domain-constants';
import { actionExecuted } from 'src/core/events/action-executed';
import { activeLoop } from 'src/core/events/active-loop';
import { type DialogueEvent } from 'src/core/events/dialogue-event';
import { type JsonObject } from 'src/core/events/event-base';
import { jsonEqual } from 'src/core/events/json-values';
import { slotSet } from 'src/core/events/slot-set';
import { userUttered } from 'src/core/events/user-uttered';
import { Random } from 'src/core/nlu/random';
import { DialogueStateTracker } from 'src/core/tracker/dialogue-state-tracker';
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
  /**
   * Made by augmentation (a story glued to the end of others); only ML policies (TED) train on
   * these, as in Rasa.
   */
  readonly isAugmented?: boolean;
}

/** How training conversations are generated (Rasa's TrainingDataGenerator settings). */
export interface TrackerGenerationOptions {
  /**
   * Rasa's `augmentation_factor` (`--augmentation`; `rasa train` default 50, 0 = off): story
   * ends glued to story starts in 3 rounds, `factor` ends per round, at most `factor × 10`
   * trackers per story step and kept in the end.
   */
  readonly augmentationFactor?: number;
  /** Seed of the augmentation's sampling (default 42, as Rasa's). */
  readonly seed?: number;
}

/** Most conversations one story graph may unfold into (checkpoint loops, `or` fan-out). */
const MAX_TRACKERS = 20000;
const MAX_CHECKPOINT_DEPTH = 20;
/** Rasa's number of augmentation rounds. */
const AUGMENTATION_ROUNDS = 3;

interface StartCheckpoint {
  readonly name: string;
  readonly conditions: Readonly<Record<string, unknown>>;
}

interface Segment {
  readonly block: StoryBlock;
  readonly start: readonly StartCheckpoint[];
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
  let start: StartCheckpoint[] = [];
  let current: StoryStepItem[] = [];
  let i = 0;
  while (i < items.length) {
    const item = items[i] as StoryStepItem;
    if (item.kind !== 'checkpoint') {
      current.push(item);
      i++;
      continue;
    }
    const checkpoints: StartCheckpoint[] = [];
    while (i < items.length && (items[i] as StoryStepItem).kind === 'checkpoint') {
      const c = items[i] as { name: string; conditions: Readonly<Record<string, unknown>> };
      checkpoints.push({ name: c.name, conditions: c.conditions });
      i++;
    }
    if (current.length === 0 && segments.length === 0 && start.length === 0) {
      start = checkpoints;
      continue;
    }
    // Conditions of end and intermediate checkpoints are ignored (the reader warned).
    const names = checkpoints.map((c) => c.name);
    if (i >= items.length) {
      segments.push({ block, start, end: names, items: current });
      return segments;
    }
    const link = `__${block.name}_${n}_${segments.length}__`;
    segments.push({ block, start, end: [...names, link], items: current });
    start = [{ name: link, conditions: {} }];
    current = [];
  }
  segments.push({ block, start, end: [], items: current });
  return segments;
}

/** A generated conversation and whether it reached a story end (not an unjoined checkpoint). */
interface Walked {
  readonly tracker: TrainingTracker;
  readonly storyEnd: boolean;
}

/** The story graph: segments, and for each checkpoint name the segments starting there. */
class StoryGraph {
  readonly segments: Segment[] = [];
  private readonly byStart = new Map<string, { seg: Segment; start: StartCheckpoint }[]>();

  constructor(
    blocks: readonly StoryBlock[],
    private readonly domain: Domain,
  ) {
    blocks.forEach((block, b) => {
      expandOr(block.steps).forEach((items, k) => {
        this.segments.push(...segmentsOf(block, items, b * 1000 + k));
      });
    });
    for (const seg of this.segments) {
      for (const start of seg.start) {
        this.byStart.set(start.name, [...(this.byStart.get(start.name) ?? []), { seg, start }]);
      }
    }
  }

  /** Segments a conversation starts with (no start checkpoint). */
  get storyStarts(): Segment[] {
    return this.segments.filter((s) => s.start.length === 0);
  }

  /**
   * Unfolds `seg` (after `prefix` events, when augmenting) through its end checkpoints. A start
   * checkpoint's `slot_was_set` conditions admit only conversations whose slots have exactly
   * those values at that point (Rasa's `Checkpoint.filter_trackers`).
   */
  walk(seg: Segment, prefix: readonly DialogueEvent[] | null, out: Walked[], limit: number): void {
    const step = (s: Segment, items: StoryStepItem[], depth: number): void => {
      if (out.length >= limit) return;
      const all = [...items, ...s.items];
      const candidates = s.end.flatMap((name) => this.byStart.get(name) ?? []);
      const nexts = candidates.filter(({ start }) => this.admits(s, all, prefix, start));
      // Joined nowhere because every continuation's conditions failed: Rasa drops it.
      if (candidates.length > 0 && nexts.length === 0) return;
      if (nexts.length === 0 || depth >= MAX_CHECKPOINT_DEPTH) {
        out.push({
          tracker: toTracker(s.block, all, this.domain, nexts.length > 0, prefix),
          storyEnd: s.end.length === 0,
        });
        return;
      }
      for (const next of nexts) step(next.seg, all, depth + 1);
    };
    step(seg, [], 0);
  }

  private admits(
    seg: Segment,
    items: readonly StoryStepItem[],
    prefix: readonly DialogueEvent[] | null,
    start: StartCheckpoint,
  ): boolean {
    const names = Object.keys(start.conditions);
    if (names.length === 0) return true;
    const events = toTracker(seg.block, items, this.domain, true, prefix).events;
    const tracker = DialogueStateTracker.fromEvents('', events, this.domain);
    return names.every((n) => jsonEqual(tracker.getSlot(n) ?? null, start.conditions[n] ?? null));
  }
}

/**
 * Unfolds stories and rules into training conversations (Rasa's TrainingDataGenerator): `or`
 * steps fan out, checkpoints join segments (start checkpoints filter on their `slot_was_set`
 * conditions), `action_listen` goes before every user message and at the end of a story; rules
 * get their conditions, `...` and the final `action_listen` (or `...` with
 * `wait_for_user_input: false`). With an `augmentationFactor`, stories are also glued to the
 * ends of other stories (never rules), sampled with a seeded generator: reproducible.
 */
export function trainingTrackers(
  blocks: readonly StoryBlock[],
  domain: Domain,
  options: TrackerGenerationOptions = {},
): TrainingTracker[] {
  const graph = new StoryGraph(blocks, domain);
  const walked: Walked[] = [];
  for (const s of graph.storyStarts) graph.walk(s, null, walked, MAX_TRACKERS);
  const original = walked.map((w) => w.tracker);
  const factor = Math.max(0, Math.floor(options.augmentationFactor ?? 0));
  if (factor === 0) return original;
  const random = new Random(options.seed ?? 42);
  const seen = new Set<string>();
  const ends: TrainingTracker[] = [];
  for (const w of walked) {
    if (!w.storyEnd || w.tracker.isRule) continue;
    const key = trackerKey(w.tracker);
    if (seen.has(key)) continue;
    seen.add(key);
    ends.push(w.tracker);
  }
  const starts = graph.storyStarts.filter((s) => !s.block.isRule);
  let augmented: TrainingTracker[] = [];
  for (let round = 0; round < AUGMENTATION_ROUNDS && ends.length > 0; round++) {
    // A story end without its final `action_listen` (Rasa reverts it), so the next story's own
    // listen follows the previous story's last action.
    const prefixes = subsample(ends, factor, random).map((t) => withoutFinalListen(t.events));
    const produced: Walked[] = [];
    for (const seg of starts) {
      for (const prefix of subsample([...prefixes], factor * 10, random)) {
        graph.walk(seg, prefix, produced, MAX_TRACKERS);
      }
    }
    for (const w of produced) {
      if (!w.storyEnd) continue;
      const tracker = { ...w.tracker, isAugmented: true };
      const key = trackerKey(tracker);
      if (seen.has(key)) continue;
      seen.add(key);
      ends.push(tracker);
      augmented.push(tracker);
    }
  }
  augmented = subsample(augmented, factor * 10, random);
  return [...original, ...augmented];
}

/** Rasa's `_subsample_array`: shuffles `items` in place and keeps the first `max`. */
function subsample<T>(items: T[], max: number, random: Random): T[] {
  random.shuffle(items);
  return items.slice(0, max);
}

function withoutFinalListen(events: readonly DialogueEvent[]): DialogueEvent[] {
  const last = events[events.length - 1];
  const drop = last?.type === 'action' && last.name === ACTION_LISTEN_NAME;
  return drop ? events.slice(0, -1) : [...events];
}

/** What makes two generated conversations the same (events without their times). */
function trackerKey(tracker: TrainingTracker): string {
  return JSON.stringify(tracker.events.map(({ timestamp: _t, ...rest }) => rest));
}

function toTracker(
  block: StoryBlock,
  items: readonly StoryStepItem[],
  domain: Domain,
  truncated: boolean,
  prefix: readonly DialogueEvent[] | null = null,
): TrainingTracker {
  const events: DialogueEvent[] = prefix ? [...prefix] : [];
  let t = prefix ? prefix.length : 0;
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
