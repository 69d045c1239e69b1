import { CreateConversationEvents1763769600000 } from './1763769600000-CreateConversationEvents';
import { AddConversationGeneration1763769700000 } from './1763769700000-AddConversationGeneration';
import { AddConversationAssistantAndTags1763769800000 } from './1763769800000-AddConversationAssistantAndTags';
import { AddConversationCounts1763769900000 } from './1763769900000-AddConversationCounts';
import { LeanConversationEvents1763770000000 } from './1763770000000-LeanConversationEvents';
import { AddEventOutbox1763770100000 } from './1763770100000-AddEventOutbox';
import { CreateReminders1763770200000 } from './1763770200000-CreateReminders';
import { CreateIdempotencyKeys1763770500000 } from './1763770500000-CreateIdempotencyKeys';
import { AddOutboxTraceparent1763770600000 } from './1763770600000-AddOutboxTraceparent';

/** Every migration, in order. New migrations are appended here. */
export const MIGRATIONS = [
  CreateConversationEvents1763769600000,
  AddConversationGeneration1763769700000,
  AddConversationAssistantAndTags1763769800000,
  AddConversationCounts1763769900000,
  LeanConversationEvents1763770000000,
  AddEventOutbox1763770100000,
  CreateReminders1763770200000,
  CreateIdempotencyKeys1763770500000,
  AddOutboxTraceparent1763770600000,
];
