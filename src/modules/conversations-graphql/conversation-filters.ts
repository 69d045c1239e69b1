import { DialogueError } from 'src/core';

/** ISO 8601 UTC with or without milliseconds: YYYY-MM-DDTHH:MM:SS[.sss]Z, nothing else. */
const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{3})?Z$/;

function badInput(message: string, details: Record<string, unknown>): DialogueError {
  return new DialogueError('REQUEST.INVALID_PARAMETER', message, details);
}

/** Seconds since the epoch of an ISO 8601 UTC time (the unit of event timestamps). */
export function parseIsoUtc(value: string, field: string): number {
  const ms = ISO_UTC.test(value) ? Date.parse(value) : NaN;
  // The round trip rejects dates that Date.parse would roll over (2026-02-30, 24:00:00).
  const canonical = value.length === 20 ? `${value.slice(0, 19)}.000Z` : value;
  if (Number.isNaN(ms) || new Date(ms).toISOString() !== canonical) {
    throw badInput(
      `${field} must be an ISO 8601 UTC time like 2026-01-31T23:59:59.999Z or 2026-01-31T23:59:59Z, got "${value}".`,
      { parameter: field },
    );
  }
  return ms / 1000;
}

export interface ConversationFilter {
  readonly assistantId: string;
  /** Inclusive bounds on the conversation start, seconds since the epoch. */
  readonly from: number | null;
  readonly to: number | null;
  /** Only conversations carrying every one of these tags; empty: any. */
  readonly tagIds: readonly string[];
  readonly limit: number;
  readonly offset: number;
  /** Window of each conversation's events: skip `eventOffset`, then at most `eventLimit`. */
  readonly eventOffset: number;
  /** Null: every event after `eventOffset` (within the answer's bounds). */
  readonly eventLimit: number | null;
}

export interface RawConversationsArgs {
  assistantId: string;
  fromTime?: string | null;
  toTime?: string | null;
  tagIds?: readonly string[] | null;
  limit?: number | null;
  offset?: number | null;
  eventOffset?: number | null;
  eventLimit?: number | null;
}

/** Most tag ids of one rawConversations filter. */
export const MAX_FILTER_TAGS = 20;

/** Checks the rawConversations input; out of range is an error, never silently clamped. */
export function toConversationFilter(
  input: RawConversationsArgs,
  maxLimit: number,
): ConversationFilter {
  const limit = input.limit ?? 10;
  const offset = input.offset ?? 0;
  if (limit < 0 || limit > maxLimit) {
    throw badInput(`limit must be between 0 and ${maxLimit}, got ${limit}.`, {
      parameter: 'limit',
      max: maxLimit,
    });
  }
  if (offset < 0) {
    throw badInput(`offset must not be negative, got ${offset}.`, { parameter: 'offset' });
  }
  const eventOffset = input.eventOffset ?? 0;
  const eventLimit = input.eventLimit ?? null;
  if (eventOffset < 0) {
    throw badInput(`eventOffset must not be negative, got ${eventOffset}.`, {
      parameter: 'eventOffset',
    });
  }
  if (eventLimit !== null && eventLimit < 0) {
    throw badInput(`eventLimit must not be negative, got ${eventLimit}.`, {
      parameter: 'eventLimit',
    });
  }
  const tagIds = input.tagIds ?? [];
  if (tagIds.length > MAX_FILTER_TAGS) {
    throw badInput(`tagIds holds at most ${MAX_FILTER_TAGS} tags, got ${tagIds.length}.`, {
      parameter: 'tagIds',
      max: MAX_FILTER_TAGS,
    });
  }
  const from = input.fromTime == null ? null : parseIsoUtc(input.fromTime, 'fromTime');
  const to = input.toTime == null ? null : parseIsoUtc(input.toTime, 'toTime');
  if (from !== null && to !== null && from > to) {
    throw badInput('fromTime must not be later than toTime.', { parameter: 'fromTime' });
  }
  return {
    assistantId: input.assistantId,
    from,
    to,
    tagIds,
    limit,
    offset,
    eventOffset,
    eventLimit,
  };
}
