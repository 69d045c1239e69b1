import { LATEST_TRAINING_DATA_FORMAT_VERSION } from 'src/core/domain/domain-constants';
import { type StoryContext, type StoryUserTurn } from 'src/core/events/define-event';
import { type DialogueEvent } from 'src/core/events/dialogue-event';
import { type JsonObject } from 'src/core/events/event-base';
import { eventKind } from 'src/core/events/event-catalogue';
import { type UserUttered } from 'src/core/events/user-uttered';
import { formatMessage } from 'src/core/story/message-annotation';
import { DialogueStateTracker } from 'src/core/tracker/dialogue-state-tracker';
import { Document, Scalar } from 'yaml';

/**
 * The final entities and featurisation of each user message of a session: `entities` and
 * `user_featurization` events right after a message change it, as they change Rasa's event object.
 */
function userTurnStates(events: readonly DialogueEvent[]): Map<UserUttered, StoryUserTurn> {
  const states = new Map<UserUttered, StoryUserTurn>();
  const tracker = new DialogueStateTracker('story', []);
  for (const event of events) {
    tracker.update(event);
    const latest = tracker.latestMessage;
    if (latest.type === 'user' && (latest === event || states.has(latest))) {
      states.set(latest, {
        entities: tracker.latestMessageEntities,
        useTextForFeaturization: tracker.latestMessageUseTextForFeaturization,
      });
    }
  }
  return states;
}

function literal(text: string): Scalar {
  const node = new Scalar(text);
  node.type = Scalar.BLOCK_LITERAL;
  return node;
}

function userText(text: string, entities: readonly JsonObject[]): Scalar {
  return literal(formatMessage(text, entities));
}

/** The steps of one session: each event's step as its catalogue entry writes it, if any. */
function storySteps(events: readonly DialogueEvent[]): JsonObject[] {
  const states = userTurnStates(events);
  const story: StoryContext = { userTurn: (event) => states.get(event), userText };
  const steps: JsonObject[] = [];
  for (const event of events) {
    const step = eventKind(event.type).story?.(event, story);
    if (step) steps.push(step);
  }
  return steps;
}

/**
 * The conversation as Rasa's YAML test stories (`GET /conversations/{id}/story`): one story per
 * session, named `<id>` or, with several sessions, `<id>, story <n>`. No sessions → only the
 * `version` line; a session without steps → `steps: []`.
 */
export function writeTestStories(
  conversationId: string,
  sessions: readonly (readonly DialogueEvent[])[],
): string {
  const version = new Scalar(LATEST_TRAINING_DATA_FORMAT_VERSION);
  version.type = Scalar.QUOTE_DOUBLE;
  const content: JsonObject = { version };
  if (sessions.length > 0) {
    content.stories = sessions.map((events, i) => ({
      story: sessions.length > 1 ? `${conversationId}, story ${i + 1}` : conversationId,
      steps: storySteps(events),
    }));
  }
  return new Document(content).toString({ indentSeq: false, lineWidth: 0, singleQuote: true });
}
