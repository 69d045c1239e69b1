/**
 * Rasa's assistant id for a config without `assistant_id`: conversations whose events carry no
 * assistant id (a server without a model, or events posted without metadata) are listed under it.
 */
export const DEFAULT_ASSISTANT_ID = 'placeholder_default';

export interface ConversationTag {
  id: string;
  name: string;
  assistantId: string;
}

/** Which conversations to list: one assistant's, newest start first (then by id). */
export interface ConversationPageQuery {
  readonly assistantId: string;
  /** Inclusive bounds on the conversation start, seconds since the epoch. */
  readonly from: number | null;
  readonly to: number | null;
  /** Only conversations carrying every one of these tags; empty: any. */
  readonly tagIds: readonly string[];
  readonly limit: number;
  readonly offset: number;
}

/** A listed conversation without its events. */
export interface ConversationSummary {
  id: string;
  /** Events stored: they are numbered 1…eventCount. */
  eventCount: number;
  tags: ConversationTag[];
}

export interface ConversationPage {
  conversations: ConversationSummary[];
  /** Every conversation the query matches, paging ignored. */
  count: number;
}

/** The events of one conversation numbered `after + 1 … upTo`. */
export interface EventWindow {
  readonly conversationId: string;
  readonly after: number;
  readonly upTo: number;
}

/** One stored event of a window: the window's index and the event's wire JSON text. */
export interface WindowEvent {
  readonly window: number;
  readonly json: string;
}

/** Reads that see one consistent state of every conversation (one snapshot). */
export interface ConversationSnapshot {
  page(query: ConversationPageQuery): Promise<ConversationPage>;
  /** Bytes (UTF-8) of the stored JSON of the windows' events, counted without reading them. */
  storedBytes(windows: readonly EventWindow[]): Promise<number>;
  /** The windows' events, window by window in order, at most `limit` of them. */
  events(windows: readonly EventWindow[], limit: number): Promise<WindowEvent[]>;
}

/** How putting a tag on a conversation went. */
export type AddTagOutcome =
  | { readonly kind: 'added' }
  | { readonly kind: 'conversation-not-found' }
  | { readonly kind: 'tag-not-found' }
  | {
      readonly kind: 'other-assistant';
      readonly tagAssistantId: string;
      readonly conversationAssistantId: string;
    };

/**
 * Port: what the conversation-management API reads and changes in the tracker module's
 * conversation tables (conversations, their events and tags). Implemented by the tracker
 * module; its users never see the tables.
 */
export abstract class ConversationQuery {
  /** Runs `read` on one snapshot of the conversations. */
  abstract inSnapshot<T>(read: (snapshot: ConversationSnapshot) => Promise<T>): Promise<T>;

  /**
   * Puts a tag on a conversation (already there: added too). A conversation without an
   * assistant id belongs to DEFAULT_ASSISTANT_ID; the tag must be of the conversation's assistant.
   */
  abstract addTag(conversationId: string, tagId: string): Promise<AddTagOutcome>;

  /** Takes a tag off a conversation, whether or not it was there. */
  abstract removeTag(conversationId: string, tagId: string): Promise<void>;

  /**
   * Deletes conversations with their events and tag links, all or none; returns how many
   * existed (duplicates and unknown ids are not counted).
   */
  abstract deleteConversations(ids: readonly string[]): Promise<number>;

  /** The assistant's tags by name (then id). */
  abstract tags(assistantId: string): Promise<ConversationTag[]>;

  /** Creates the assistant's tag of that name, or returns it when it exists. */
  abstract createTag(assistantId: string, name: string): Promise<ConversationTag>;

  /** Deletes a tag and takes it off every conversation; `false` when there was no such tag. */
  abstract deleteTag(tagId: string): Promise<boolean>;
}
