import { type JsonObject } from 'src/core/events/event-base';

/**
 * Frames of the dialogue stack as they travel on the wire (the tracker's `stack` field, the
 * `stack` events' patches): plain JSON objects, bottom of the stack first. Field names are
 * Rasa's exactly.
 */

/** A user flow's frame (`type: "flow"`). */
export interface UserFlowFrame {
  readonly frame_id: string;
  readonly flow_id: string;
  readonly step_id: string;
  /** `regular`, `interrupt`, `link` or `call` (missing on load ⇒ `regular`). */
  readonly frame_type: 'regular' | 'interrupt' | 'link' | 'call';
  readonly type: 'flow';
}

/**
 * A pattern's frame: `type` equals its `flow_id` (`pattern_collect_information`, …) and it carries
 * the pattern's own fields (`collect`, `utter`, `collect_action`, `rejections`; `canceled_name`,
 * `canceled_frames`; `previous_flow_name`; …).
 */
export interface PatternFrame {
  readonly frame_id: string;
  readonly flow_id: string;
  readonly step_id: string;
  readonly type: string;
  readonly [field: string]: unknown;
}

/** Frames of other policies (`chitchat`, `search`): only a `frame_id`. */
export interface OtherFrame {
  readonly frame_id: string;
  readonly type: 'chitchat' | 'search';
}

export type StackFrame = UserFlowFrame | PatternFrame | OtherFrame;

/** The stack: bottom first (what `tracker.stack` holds). */
export type StackJson = readonly JsonObject[];
