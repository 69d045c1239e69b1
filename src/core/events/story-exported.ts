import { defineEvent } from 'src/core/events/define-event';
import { eventBase, type EventBase, type EventBaseInit } from 'src/core/events/event-base';
import { optionalString } from 'src/core/events/json-values';

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

export const STORY_EXPORTED_KIND = defineEvent<StoryExported>({
  type: 'export',
  decode: (raw, base) => storyExported({ ...base, path: optionalString(raw.path) }),
  example: { event: 'export', timestamp: 1700000000.5 },
});
