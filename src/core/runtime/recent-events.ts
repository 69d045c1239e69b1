import { type HandedOverEvents } from 'src/core/ports/lock-store';
import { type StoreVersion } from 'src/core/ports/tracker-store';

/**
 * The most recent stored events of a cached session as stored JSON, for the next holder of the
 * conversation's lock on another instance (a lock store that hands events over): a run of
 * segments, each a JSON array of events stored right after its `after` version, the last one
 * ending at the session's version. Bounded by {@link MAX_RECENT_CHARS}: the oldest segments go
 * first.
 */
export interface RecentEvents {
  readonly segments: readonly RecentSegment[];
  /** The segments' JSON length together. */
  readonly chars: number;
}

export interface RecentSegment {
  readonly after: StoreVersion;
  /** A JSON array text of the events, as stored. */
  readonly json: string;
  readonly count: number;
}

/**
 * Characters of recent events a cached session keeps (and a holder hands over): a few turns of
 * a conversation, enough for a replica a few turns behind, small beside the session itself.
 * Every turn sends the whole window to the lock store, whichever instance holds the lock next:
 * its cost grows with this bound (with 16 Ki, one instance with Redis locks spent about a
 * seventh of its CPU per turn on it).
 */
export const MAX_RECENT_CHARS = 8 * 1024;

export const NO_RECENT_EVENTS: RecentEvents = Object.freeze({ segments: [], chars: 0 });

/** Where the segments end: the version after their last event (null without segments). */
function endOf(recent: RecentEvents): StoreVersion | null {
  const last = recent.segments.at(-1);
  return last === undefined
    ? null
    : { generation: last.after.generation, lastSeq: last.after.lastSeq + last.count };
}

/**
 * `recent` with a segment of events stored after `after` added; a segment that does not continue
 * `recent` starts a new run. Over the bound, the oldest segments are dropped (all of them when
 * the new segment alone is over it).
 */
export function withSegment(recent: RecentEvents, segment: RecentSegment): RecentEvents {
  if (segment.json.length > MAX_RECENT_CHARS) return NO_RECENT_EVENTS;
  const end = endOf(recent);
  const continues =
    end !== null &&
    end.generation === segment.after.generation &&
    end.lastSeq === segment.after.lastSeq;
  const segments = continues ? [...recent.segments, segment] : [segment];
  let chars = (continues ? recent.chars : 0) + segment.json.length;
  let first = 0;
  while (chars > MAX_RECENT_CHARS) chars -= segments[first++]!.json.length;
  return { segments: first === 0 ? segments : segments.slice(first), chars };
}

/** JSON array text of a turn's (or a read's) events from their JSON texts. */
export function jsonArrayOf(texts: readonly string[]): string {
  let json = '[';
  for (let i = 0; i < texts.length; i++) json += (i === 0 ? '' : ',') + texts[i]!;
  return `${json}]`;
}

/** The recent events as one hand-over: every segment, from the first one's `after`. */
export function handOverOf(recent: RecentEvents): HandedOverEvents | undefined {
  const [first] = recent.segments;
  if (first === undefined) return undefined;
  if (recent.segments.length === 1) return { after: first.after, json: first.json };
  let json = '';
  for (const s of recent.segments) {
    if (s.count === 0) continue;
    json += (json === '' ? '' : ',') + s.json.slice(1, -1);
  }
  return { after: first.after, json: `[${json}]` };
}
