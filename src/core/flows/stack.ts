import { type JsonObject } from 'src/core/events/event-base';
import { type UserFlowFrame } from './frames';

/** One operation of an RFC 6902 JSON patch. */
export interface PatchOperation {
  readonly op: 'add' | 'remove' | 'replace';
  readonly path: string;
  readonly value?: unknown;
}

const FRAME_ID_CHARS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';

/** A new frame id: 8 random characters, as Rasa's. */
export function newFrameId(random: () => number = Math.random): string {
  let id = '';
  for (let i = 0; i < 8; i++) id += FRAME_ID_CHARS[Math.floor(random() * FRAME_ID_CHARS.length)];
  return id;
}

/**
 * The dialogue stack (Rasa Pro): frames as JSON objects, bottom first, exactly as the tracker's
 * `stack` holds them. A working copy: change it with `push` / `pop` / `update`, then turn the
 * difference to the tracker's stack into a `stack` event with `patchFrom`.
 *
 * Frames are never changed in place (`update` puts a changed copy in the frame's place), so a
 * stack shares its frames with the list it was made from and with the lists it hands out:
 * making a working copy, or the list a `stack` event leads to, copies no frame.
 */
export class DialogueStack {
  private readonly frames: JsonObject[];
  /** The context of the current frames (`context()`); null when not computed since a change. */
  private contextCache: JsonObject | null = null;

  constructor(frames: readonly unknown[] = []) {
    this.frames = frames.slice() as JsonObject[];
  }

  /** The frames, bottom first (a new list of the shared frames: do not change them). */
  toJSON(): JsonObject[] {
    return this.frames.slice();
  }

  get isEmpty(): boolean {
    return this.frames.length === 0;
  }

  get size(): number {
    return this.frames.length;
  }

  /** The frame at `index` from the bottom (shared: change it through `update`). */
  at(index: number): JsonObject | undefined {
    return this.frames[index];
  }

  /** Pushes on top, or at `index` (−1: just below the top). */
  push(frame: JsonObject, index?: number): void {
    this.contextCache = null;
    if (index === undefined) this.frames.push({ ...frame });
    else {
      const at = index < 0 ? Math.max(0, this.frames.length + index) : index;
      this.frames.splice(at, 0, { ...frame });
    }
  }

  pop(): JsonObject | undefined {
    this.contextCache = null;
    return this.frames.pop();
  }

  /** The top frame, skipping frames for which `ignore` holds. */
  top(ignore?: (frame: JsonObject) => boolean): JsonObject | undefined {
    for (let i = this.frames.length - 1; i >= 0; i--) {
      const f = this.frames[i] as JsonObject;
      if (ignore === undefined || !ignore(f)) return f;
    }
    return undefined;
  }

  /** Index (from the bottom) of the top frame for which `match` holds; −1 when none. */
  topIndex(match: (frame: JsonObject) => boolean): number {
    for (let i = this.frames.length - 1; i >= 0; i--) {
      if (match(this.frames[i] as JsonObject)) return i;
    }
    return -1;
  }

  /** Sets fields of the frame at `index` (on a copy of the frame, which takes its place). */
  update(index: number, fields: JsonObject): void {
    const frame = this.frames[index];
    if (frame === undefined) return;
    this.contextCache = null;
    this.frames[index] = merged(frame, fields);
  }

  /**
   * The stack's context (Rasa's `current_context`): the top frame's fields; a
   * collect-information frame's own fields overlaid with the frame below's context, so inside a
   * collect `flow_id` / `step_id` are the user flow's. Computed once per state of the stack and
   * shared by the callers until the stack changes: do not change it.
   */
  context(): JsonObject {
    this.contextCache ??= contextAt(this.frames, this.frames.length - 1);
    return this.contextCache;
  }

  /** The topmost user flow frame (`type: "flow"`), by default skipping `call` and `link` ones. */
  topUserFlowFrame(includeCallAndLink = false): UserFlowFrame | undefined {
    const i = this.topIndex(
      (f) =>
        f.type === 'flow' &&
        (includeCallAndLink || (f.frame_type !== 'call' && f.frame_type !== 'link')),
    );
    return i < 0 ? undefined : (this.frames[i] as unknown as UserFlowFrame);
  }

  /** The top flow frame (user or pattern), skipping collect-information frames and call frames. */
  topFlowFrame(): JsonObject | undefined {
    return this.top(
      (f) =>
        f.type === 'pattern_collect_information' ||
        (f.type === 'flow' && f.frame_type === 'call') ||
        f.flow_id === undefined,
    );
  }

  /** Ids of every user flow on the stack, bottom first. */
  userFlowIds(): string[] {
    return this.frames.filter((f) => f.type === 'flow').map((f) => String(f.flow_id));
  }

  /**
   * The RFC 6902 patch that turns `before` (the tracker's stack) into this stack; empty when
   * nothing changed. Frames are compared field by field, so a moved step is one `replace`.
   */
  patchFrom(before: readonly unknown[]): PatchOperation[] {
    return diffFrames(before as readonly JsonObject[], this.frames);
  }
}

function contextAt(frames: readonly JsonObject[], index: number): JsonObject {
  const frame = frames[index];
  if (frame === undefined) return {};
  if (frame.type === 'pattern_collect_information') {
    return merged(frame, contextAt(frames, index - 1));
  }
  return { ...frame };
}

/**
 * `{ ...a, ...b }`, made with Object.assign: keys `b` adds to a spread's copy take V8's slow
 * path (see `extendable` in json-values). A `__proto__` key (JSON.parse makes it an own
 * property) keeps the spread, which copies it as the key it is.
 */
function merged(a: JsonObject, b: JsonObject): JsonObject {
  if (Object.hasOwn(a, '__proto__') || Object.hasOwn(b, '__proto__')) return { ...a, ...b };
  return Object.assign({}, a, b);
}

/** A deterministic diff of two frame lists (add / remove / replace only). */
export function diffFrames(
  before: readonly JsonObject[],
  after: readonly JsonObject[],
): PatchOperation[] {
  const ops: PatchOperation[] = [];
  const common = Math.min(before.length, after.length);
  for (let i = 0; i < common; i++) {
    const a = before[i] as JsonObject;
    const b = after[i] as JsonObject;
    if (a === b) continue; // frames are never changed in place
    if (a.frame_id !== b.frame_id || a.type !== b.type) {
      ops.push({ op: 'replace', path: `/${i}`, value: b });
      continue;
    }
    for (const key of Object.keys(a)) {
      if (!(key in b)) ops.push({ op: 'remove', path: `/${i}/${escape(key)}` });
    }
    for (const key of Object.keys(b)) {
      if (!(key in a)) ops.push({ op: 'add', path: `/${i}/${escape(key)}`, value: b[key] });
      else if (a[key] !== b[key] && !sameJson(a[key], b[key])) {
        ops.push({ op: 'replace', path: `/${i}/${escape(key)}`, value: b[key] });
      }
    }
  }
  for (let i = common; i < after.length; i++) {
    ops.push({ op: 'add', path: `/${i}`, value: after[i] });
  }
  for (let i = before.length - 1; i >= common; i--) ops.push({ op: 'remove', path: `/${i}` });
  return ops;
}

/** Whether two frame values serialise alike (only objects and arrays get this far). */
function sameJson(a: unknown, b: unknown): boolean {
  return typeof a === 'object' && typeof b === 'object' && JSON.stringify(a) === JSON.stringify(b);
}

function escape(key: string): string {
  return key.replace(/~/g, '~0').replace(/\//g, '~1');
}
