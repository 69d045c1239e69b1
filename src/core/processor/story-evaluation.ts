import { type TrainingTracker } from 'src/core/dialogue/story-graph';
import { ACTION_LISTEN_NAME } from 'src/core/domain/domain-constants';
import { actionExecuted } from 'src/core/events/action-executed';
import { actionExecutionRejected } from 'src/core/events/action-execution-rejected';
import { type JsonObject } from 'src/core/events/event-base';
import { userUttered } from 'src/core/events/user-uttered';
import { classificationReport } from 'src/core/nlu/evaluation';
import { type DialogueProcessor } from 'src/core/processor/dialogue-processor';
import { DialogueStateTracker } from 'src/core/tracker/dialogue-state-tracker';

/** One evaluated action (`actions` of `POST /model/test/stories`). */
export interface EvaluatedAction {
  action: string;
  predicted: string;
  policy: string | null;
  confidence: number | null;
}

/** One evaluated test story. */
export interface StoryOutcome {
  readonly name: string;
  readonly file: string;
  readonly line: number | undefined;
  readonly correct: boolean;
  readonly actions: EvaluatedAction[];
  /** Wrong NLU predictions (e2e): `[text, gold intent, predicted intent]`. */
  readonly nluErrors: [string, string, string][];
}

/** The result of `rasa test core` / `POST /model/test/stories`. */
export interface StoryEvaluation {
  report: JsonObject;
  precision: number;
  f1: number;
  accuracy: number;
  actions: EvaluatedAction[];
  in_training_data_fraction: number;
  is_end_to_end_evaluation: boolean;
}

/**
 * Rasa's story evaluation: each test story is replayed; before every gold action the model
 * predicts the next action on the conversation so far (a form predicted against the gold is
 * rejected once, as Rasa emulates). Wrong predictions are recorded and replaced by the gold
 * action (teacher forcing). With `parse` (e2e) user texts are parsed and intents compared.
 */
export function evaluateStories(
  processor: DialogueProcessor,
  stories: readonly TrainingTracker[],
  parse: ((text: string) => JsonObject) | null,
): { evaluation: StoryEvaluation; outcomes: StoryOutcome[] } {
  const domain = processor.domain;
  const outcomes: StoryOutcome[] = [];
  const all: EvaluatedAction[] = [];
  const inData: boolean[] = [];
  for (const story of stories) {
    const tracker = new DialogueStateTracker(story.name, domain.slots);
    const actions: EvaluatedAction[] = [];
    const nluErrors: [string, string, string][] = [];
    let correct = true;
    story.events.forEach((event, index) => {
      if (index === 0 && event.type === 'action' && event.name === ACTION_LISTEN_NAME) {
        tracker.update(event);
        return;
      }
      if (event.type === 'user') {
        if (parse !== null && event.text) {
          const parsed = parse(event.text);
          const gold = typeof event.intent.name === 'string' ? event.intent.name : '';
          const intent = parsed.intent as JsonObject | undefined;
          const predicted = typeof intent?.name === 'string' ? intent.name : '';
          if (gold && predicted !== gold) {
            correct = false;
            nluErrors.push([event.text, gold, predicted]);
          }
          tracker.update(
            userUttered({
              text: event.text,
              intent: event.intent,
              entities: event.entities,
              parseData: {
                ...event.parseData,
                response_selector: parsed.response_selector ?? null,
              },
              timestamp: event.timestamp,
            }),
          );
          return;
        }
        tracker.update(event);
        return;
      }
      if (event.type !== 'action') {
        tracker.update(event);
        return;
      }
      const gold = event.name ?? event.actionText ?? '';
      let prediction = processor.predict(tracker);
      let predicted = retrievalName(prediction?.actionName ?? 'None', gold, tracker);
      const loop = tracker.activeLoopName;
      if (prediction !== null && predicted !== gold && loop !== null && predicted === loop) {
        tracker.update(actionExecutionRejected({ name: loop, timestamp: event.timestamp }));
        prediction = processor.predict(tracker);
        predicted = retrievalName(prediction?.actionName ?? 'None', gold, tracker);
      }
      const record: EvaluatedAction = {
        action: gold,
        predicted,
        policy: prediction?.policyName ?? null,
        confidence: prediction?.maxConfidence ?? null,
      };
      actions.push(record);
      inData.push(Boolean(prediction?.inTrainingData) && (prediction?.maxConfidence ?? 0) > 0);
      if (predicted !== gold) correct = false;
      tracker.update(
        actionExecuted({
          name: event.name,
          actionText: event.actionText,
          policy: predicted === gold ? record.policy : null,
          confidence: predicted === gold ? record.confidence : null,
          timestamp: event.timestamp,
        }),
      );
    });
    all.push(...actions);
    outcomes.push({
      name: story.name,
      file: story.file,
      line: story.line,
      correct,
      actions,
      nluErrors,
    });
  }
  const targets = all.map((a) => a.action);
  const predictions = all.map((a) => a.predicted);
  const metrics = classificationReport(targets, predictions);
  const correctStories = outcomes.filter((o) => o.correct).length;
  const report: JsonObject = {
    ...metrics.report,
    conversation_accuracy: {
      accuracy: outcomes.length ? correctStories / outcomes.length : 0,
      correct: correctStories,
      with_warnings: 0,
      total: outcomes.length,
    },
  };
  return {
    evaluation: {
      report,
      precision: metrics.precision,
      f1: metrics.f1,
      accuracy: metrics.accuracy,
      actions: all,
      in_training_data_fraction: inData.length ? inData.filter(Boolean).length / inData.length : 0,
      is_end_to_end_evaluation: parse !== null,
    },
    outcomes,
  };
}

/** A predicted retrieval action compared with a gold `utter_faq/ask_x` names the selected response. */
function retrievalName(predicted: string, gold: string, tracker: DialogueStateTracker): string {
  if (!gold.startsWith(`${predicted}/`)) return predicted;
  const message = tracker.latestMessage;
  const full = message.intent.full_retrieval_intent_name;
  if (typeof full === 'string') return `utter_${full}`;
  const selector = message.parseData.response_selector as JsonObject | null | undefined;
  const intent = predicted.slice('utter_'.length);
  const entry = selector?.[intent] as JsonObject | undefined;
  const response = entry?.response as JsonObject | undefined;
  const key = response?.intent_response_key;
  return typeof key === 'string' ? `utter_${key}` : predicted;
}
