import { CreateConversationEvents1763769600000 } from './1763769600000-CreateConversationEvents';

/** Every migration, in order. New migrations are appended here. */
export const MIGRATIONS = [CreateConversationEvents1763769600000];
