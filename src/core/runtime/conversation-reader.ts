import { type JsonObject } from 'src/core/events/event-base';
import { type EventVerbosity } from 'src/core/tracker/event-verbosity';

/**
 * Port: reads a conversation's tracker as the REST API answers it, for channels that hand the
 * tracker to their own code (custom channels) or read slots from it (the voice connector's
 * output variables). An unknown conversation answers a tracker with a session start that is
 * not stored.
 */
export abstract class ConversationReader {
  abstract trackerState(conversationId: string, verbosity: EventVerbosity): Promise<JsonObject>;
}
