import { DialogueError } from 'src/core';

/**
 * What one GraphQL answer may still hold: conversation events and bytes of their stored JSON,
 * shared by every root field (and alias) of the request. A field that would overdraw it is
 * refused before its events are read; nothing is silently cut off.
 */
export class AnswerBudget {
  private events: number;
  private bytes: number;

  constructor(
    readonly maxEvents: number,
    readonly maxBytes: number,
  ) {
    this.events = maxEvents;
    this.bytes = maxBytes;
  }

  private refuse(what: string, setting: string, max: number): DialogueError {
    return new DialogueError(
      'REQUEST.INVALID_PARAMETER',
      `The answer would hold ${what}; one answer holds at most ${max} (${setting}). ` +
        'Ask for fewer conversations (limit) or page their events (eventOffset, eventLimit).',
      { parameter: 'limit', maxEvents: this.maxEvents, maxBytes: this.maxBytes },
    );
  }

  /** Takes `count` events from the budget, or throws BAD_USER_INPUT naming the bound. */
  takeEvents(count: number): void {
    if (count > this.events) {
      const asked = this.maxEvents - this.events + count;
      throw this.refuse(`${asked} events`, 'GRAPHQL_MAX_EVENTS', this.maxEvents);
    }
    this.events -= count;
  }

  /** Takes `count` bytes from the budget, or throws BAD_USER_INPUT naming the bound. */
  takeBytes(count: number): void {
    if (count > this.bytes) {
      const asked = this.maxBytes - this.bytes + count;
      throw this.refuse(`${asked} bytes of events`, 'GRAPHQL_MAX_ANSWER_BYTES', this.maxBytes);
    }
    this.bytes -= count;
  }
}
