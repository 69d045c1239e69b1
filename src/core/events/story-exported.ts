import { eventBase, type EventBase, type EventBaseInit } from 'src/core/events/event-base';

/** `export`: dump the conversation as a story to `path`. As in Rasa, `path` is not serialised. */
export interface StoryExported extends EventBase {
  readonly type: 'export';
  readonly path: string | null;
}

export function storyExported(
  init: EventBaseInit & { readonly path?: string | null },
): StoryExported {
  return { type: 'export', ...eventBase(init), path: init.path ?? null };
}
