import {
  ACTION_LISTEN_NAME,
  ACTION_SESSION_START_NAME,
  ACTION_UNLIKELY_INTENT_NAME,
  LATEST_TRAINING_DATA_FORMAT_VERSION,
  RULE_SNIPPET_ACTION_NAME,
} from 'src/core/domain/domain-constants';
import { type DialogueEvent } from 'src/core/events/dialogue-event';
import { type JsonObject } from 'src/core/events/event-base';
import {
  fullRetrievalIntentNameOf,
  intentNameOf,
  type UserUttered,
} from 'src/core/events/user-uttered';
import { formatMessage } from 'src/core/story/message-annotation';
import { DialogueStateTracker } from 'src/core/tracker/dialogue-state-tracker';
import { Document, Scalar } from 'yaml';

/** Rasa Pro's built-in slot that is never written into stories. */
const FLOW_HASHES_SLOT = 'flow_hashes';

/** Actions a story never shows. */
const HIDDEN_ACTIONS = new Set([
  ACTION_LISTEN_NAME,
  ACTION_SESSION_START_NAME,
  ACTION_UNLIKELY_INTENT_NAME,
]);

interface UserTurnState {
  entities: readonly JsonObject[];
  useTextForFeaturization: boolean | null;
}

/**
 * The final entities and featurisation of each user message of a session: `entities` and
 * `user_featurization` events right after a message change it, as they change Rasa's event object.
 */
function userTurnStates(events: readonly DialogueEvent[]): Map<UserUttered, UserTurnState> {
  const states = new Map<UserUttered, UserTurnState>();
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

function userStep(event: UserUttered, state: UserTurnState | undefined): JsonObject | null {
  const step: JsonObject = {};
  const useText = state ? state.useTextForFeaturization : event.useTextForFeaturization;
  const intent = intentNameOf(event);
  if (intent && !useText) step.intent = fullRetrievalIntentNameOf(event) ?? intent;
  if (event.text) step.user = literal(formatMessage(event.text, state?.entities ?? event.entities));
  return Object.keys(step).length > 0 ? step : null;
}

function stepFor(event: DialogueEvent, states: Map<UserUttered, UserTurnState>): JsonObject | null {
  switch (event.type) {
    case 'user':
      return userStep(event, states.get(event));
    case 'action':
      if (event.name === RULE_SNIPPET_ACTION_NAME) return null;
      if (event.name !== null && HIDDEN_ACTIONS.has(event.name)) return null;
      if (event.name) return { action: event.name };
      if (event.actionText) return { bot: event.actionText };
      return null;
    case 'slot':
      if (event.name === FLOW_HASHES_SLOT) return null;
      return { slot_was_set: [{ [event.name]: event.value }] };
    case 'active_loop':
      return { active_loop: event.name };
    case 'user_featurization':
    case 'entities':
    case 'bot':
    case 'reset_slots':
    case 'restart':
    case 'rewind':
    case 'undo':
    case 'session_started':
    case 'action_execution_rejected':
    case 'loop_interrupted':
    case 'followup':
    case 'pause':
    case 'resume':
    case 'reminder':
    case 'cancel_reminder':
    case 'export':
    case 'agent':
    case 'stack':
    case 'flow_started':
    case 'flow_interrupted':
    case 'flow_resumed':
    case 'flow_completed':
    case 'flow_cancelled':
    case 'agent_started':
    case 'agent_completed':
    case 'agent_interrupted':
    case 'agent_resumed':
    case 'agent_cancelled':
    case 'routing_session_ended':
    case 'session_ended':
    case 'error':
      // Not part of stories (Rasa Pro writes `stack` updates; OSS 3.x does not).
      return null;
  }
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
    content.stories = sessions.map((events, i) => {
      const states = userTurnStates(events);
      const steps = events
        .map((e) => stepFor(e, states))
        .filter((s): s is JsonObject => s !== null);
      return {
        story: sessions.length > 1 ? `${conversationId}, story ${i + 1}` : conversationId,
        steps,
      };
    });
  }
  return new Document(content).toString({ indentSeq: false, lineWidth: 0, singleQuote: true });
}
