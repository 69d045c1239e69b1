import { Inject, Injectable } from '@nestjs/common';
import { DialogueError } from 'src/core';
import { ConversationQuery, type ConversationTag, type EventWindow } from 'src/modules/tracker';
import { APP_CONFIG, type AppConfig } from 'src/platform/config/app-config';
import { type AnswerBudget } from './answer-budget';
import { type ConversationFilter } from './conversation-filters';

export interface RawConversation {
  id: string;
  eventCount: number;
  conversationEvents: Array<Record<string, unknown>>;
  tags: ConversationTag[];
}

export interface RawConversationPage {
  conversations: RawConversation[];
  count: number;
}

/** Events as Rasa's event broker publishes them: `sender_id` first, then the stored event. */
function withSenderId(event: Record<string, unknown>, id: string): Record<string, unknown> {
  return 'sender_id' in event ? event : { sender_id: id, ...event };
}

/** What `"sender_id":"<id>",` adds to an event in the answer. */
function senderIdBytes(id: string): number {
  return Buffer.byteLength(id, 'utf8') + 16;
}

/** What rawConversations reads besides the page itself. */
export interface PageReading {
  /** Whether the events are selected at all (else none is read). */
  readonly events: boolean;
  /** The request's answer budget the events are taken from. */
  readonly budget: AnswerBudget;
}

/** Conversations, tags and their links, through the tracker module's ConversationQuery. */
@Injectable()
export class ConversationsService {
  constructor(
    private readonly query: ConversationQuery,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * One page of conversations, in one snapshot: the page with event counts, then (when events
   * are selected) the byte size of the asked event windows, then the events. The count and the
   * size are checked against the request's answer budget before the events are read, so the
   * database never builds, and Node never receives, more than the budget.
   */
  rawConversations(filter: ConversationFilter, reading: PageReading): Promise<RawConversationPage> {
    return this.query.inSnapshot(async (snapshot) => {
      const page = await snapshot.page(filter);
      const conversations: RawConversation[] = page.conversations.map((c) => ({
        id: c.id,
        eventCount: c.eventCount,
        conversationEvents: [],
        tags: c.tags,
      }));
      if (!reading.events) return { count: page.count, conversations };

      const windows: EventWindow[] = [];
      let events = 0;
      let senderIds = 0;
      for (const c of page.conversations) {
        const lo = Math.min(filter.eventOffset, c.eventCount);
        const hi =
          filter.eventLimit === null
            ? c.eventCount
            : Math.min(c.eventCount, lo + filter.eventLimit);
        windows.push({ conversationId: c.id, after: lo, upTo: hi });
        events += hi - lo;
        senderIds += (hi - lo) * senderIdBytes(c.id);
      }
      reading.budget.takeEvents(events);
      if (events === 0) return { count: page.count, conversations };
      reading.budget.takeBytes((await snapshot.storedBytes(windows)) + senderIds);
      for (const event of await snapshot.events(windows, events)) {
        const conversation = conversations[event.window];
        if (conversation === undefined) continue;
        const data = JSON.parse(event.json) as Record<string, unknown>;
        conversation.conversationEvents.push(withSenderId(data, conversation.id));
      }
      return { count: page.count, conversations };
    });
  }

  /**
   * Puts a tag on a conversation; true also when it is already there. Unknown conversation,
   * unknown tag, or a tag of another assistant than the conversation's: a coded error.
   */
  async addTag(conversationId: string, tagId: string): Promise<boolean> {
    const outcome = await this.query.addTag(conversationId, tagId);
    switch (outcome.kind) {
      case 'conversation-not-found':
        throw new DialogueError(
          'CONVERSATIONS.CONVERSATION_NOT_FOUND',
          `Conversation "${conversationId}" does not exist.`,
          { conversationId },
        );
      case 'tag-not-found':
        throw new DialogueError('CONVERSATIONS.TAG_NOT_FOUND', `Tag "${tagId}" does not exist.`, {
          tagId,
        });
      case 'other-assistant':
        throw new DialogueError(
          'CONVERSATIONS.TAG_OF_OTHER_ASSISTANT',
          `Tag "${tagId}" belongs to assistant "${outcome.tagAssistantId}", conversation "${conversationId}" to assistant "${outcome.conversationAssistantId}".`,
          { conversationId, tagId },
        );
      case 'added':
        return true;
    }
  }

  /** Takes a tag off a conversation; true whether or not it was there. */
  async removeTag(conversationId: string, tagId: string): Promise<boolean> {
    await this.query.removeTag(conversationId, tagId);
    return true;
  }

  /**
   * Deletes conversations with their events and tag links (all or none); returns how many
   * existed. Duplicates and unknown ids are not counted.
   */
  async deleteConversations(ids: readonly string[]): Promise<number> {
    const max = this.config.graphql.maxDeleteIds;
    if (ids.length > max) {
      throw new DialogueError(
        'REQUEST.INVALID_PARAMETER',
        `conversationIds may hold at most ${max} identifiers, got ${ids.length}.`,
        { parameter: 'conversationIds', max },
      );
    }
    if (ids.length === 0) return 0;
    return this.query.deleteConversations(ids);
  }

  tags(assistantId: string): Promise<ConversationTag[]> {
    return this.query.tags(assistantId);
  }

  /** Creates a tag (or returns the assistant's tag of that name: idempotent). */
  async createTag(assistantId: string, name: string): Promise<ConversationTag> {
    const trimmed = name.trim();
    if (trimmed.length === 0 || trimmed.length > 100) {
      throw new DialogueError(
        'REQUEST.INVALID_PARAMETER',
        'name must hold 1 to 100 characters (surrounding spaces are trimmed).',
        { parameter: 'name' },
      );
    }
    if (assistantId.length === 0) {
      throw new DialogueError('REQUEST.INVALID_PARAMETER', 'assistantId must not be empty.', {
        parameter: 'assistantId',
      });
    }
    return this.query.createTag(assistantId, trimmed);
  }

  /** Deletes a tag and takes it off every conversation; true when the tag existed. */
  deleteTag(tagId: string): Promise<boolean> {
    return this.query.deleteTag(tagId);
  }
}
