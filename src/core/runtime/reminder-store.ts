import { type JsonObject } from 'src/core/events/event-base';

/** A scheduled reminder as a ReminderStore keeps it. */
export interface ReminderRecord {
  readonly conversationId: string;
  /** Rasa's job id: a reminder with the same name replaces the conversation's earlier one. */
  readonly name: string;
  readonly intent: string;
  readonly entities: JsonObject[];
  /** When it is due, in milliseconds since the epoch. */
  readonly triggerAt: number;
  readonly killOnUserMessage: boolean;
  /** When it was set: its event's timestamp (seconds since the epoch, Rasa's timestamps). */
  readonly scheduledAt: number;
  /** The output channel of the turn that set it. */
  readonly outputChannel: string | null;
}

/** A due reminder one instance claimed: it fires it, then completes (or retries) it. */
export interface ClaimedReminder extends ReminderRecord {
  /** The claim's token: `complete` and `retry` act only while the claim is still this one. */
  readonly claim: string;
  /** How often it was claimed, this claim included. */
  readonly attempts: number;
}

/** What a `cancel_reminder` cancels: by name, else by intent and entities (null: any). */
export type ReminderMatch =
  | { readonly name: string }
  | { readonly name: null; readonly intent: string | null; readonly entities: JsonObject[] | null };

/**
 * Port: the reminders of every conversation, shared by all instances. A reminder is claimed by
 * exactly one instance at a time (`claimDue`); a claim is a lease its instance renews while it
 * fires the reminder, so a reminder whose instance died before completing it is claimed again
 * once the lease ends.
 */
export abstract class ReminderStore {
  /** Stores `reminder`, replacing the conversation's reminder of the same name (even a claimed one). */
  abstract schedule(reminder: ReminderRecord): Promise<void>;

  /** Deletes the conversation's reminders matching `match`; returns how many. */
  abstract cancel(conversationId: string, match: ReminderMatch): Promise<number>;

  /**
   * Claims up to `limit` reminders due at `nowMs` — pending ones, and claimed ones whose lease
   * ended — for `leaseMs`. Concurrent callers never get the same reminder.
   */
  abstract claimDue(nowMs: number, limit: number, leaseMs: number): Promise<ClaimedReminder[]>;

  /**
   * Extends to `nowMs + leaseMs` the lease of `reminders` (their instance is firing them),
   * each only while its claim is still the one given; ones completed, retried, replaced or
   * claimed by another instance since are left alone.
   */
  abstract renew(
    reminders: readonly ClaimedReminder[],
    nowMs: number,
    leaseMs: number,
  ): Promise<void>;

  /** The reminder fired (or is given up): removes it, unless it was replaced since the claim. */
  abstract complete(reminder: ClaimedReminder): Promise<void>;

  /** Firing failed: makes it pending again at `atMs`, unless it was replaced since the claim. */
  abstract retry(reminder: ClaimedReminder, atMs: number): Promise<void>;

  /** Reminders whose time has come and that have not fired yet (pending or claimed). */
  abstract dueCount(nowMs: number): Promise<number>;
}

/** One text per entity list, independent of key order: what a cancel by entities compares. */
export function entitiesKey(entities: readonly JsonObject[]): string {
  return canonicalJson(entities);
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** Whether `match` cancels `reminder` (Rasa's ReminderCancelled.cancels_job_with_name). */
export function cancels(match: ReminderMatch, reminder: ReminderRecord): boolean {
  if (match.name !== null) return match.name === reminder.name;
  return (
    (match.intent === null || match.intent === reminder.intent) &&
    (match.entities === null || entitiesKey(match.entities) === entitiesKey(reminder.entities))
  );
}

/** Rasa's entities of a reminder: a list of `{entity, value}`, or a `{name: value}` object. */
export function entityList(value: unknown): JsonObject[] {
  if (Array.isArray(value)) {
    return value.filter((e): e is JsonObject => typeof e === 'object' && e !== null);
  }
  if (typeof value === 'object' && value !== null) {
    return Object.entries(value as JsonObject).map(([entity, v]) => ({ entity, value: v }));
  }
  return [];
}
