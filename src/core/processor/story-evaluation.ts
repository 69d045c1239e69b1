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
  /**
   * Wrong NLU predictions (e2e): `[text, gold intent, predicted intent, the text with the
   * predicted entities marked as in training data]`.
   */
  readonly nluErrors: [string, string, string, string][];
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
  const intentTargets: string[] = [];
  const intentPredictions: string[] = [];
  const entityTargets: ComparableEntity[] = [];
  const entityPredictions: ComparableEntity[] = [];
  for (const story of stories) {
    const tracker = new DialogueStateTracker(story.name, domain.slots);
    const actions: EvaluatedAction[] = [];
    const nluErrors: [string, string, string, string][] = [];
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
          let wrong = false;
          if (gold) {
            intentTargets.push(gold);
            intentPredictions.push(predicted);
            wrong = predicted !== gold;
          }
          const goldEntities = comparableEntities(event.text, event.entities);
          const found = comparableEntities(event.text, parsed.entities);
          if (goldEntities.length > 0 || found.length > 0) {
            entityTargets.push(...goldEntities);
            entityPredictions.push(...found);
            if (!sameEntities(goldEntities, found)) wrong = true;
          }
          if (wrong) {
            correct = false;
            nluErrors.push([event.text, gold, predicted, annotatedText(event.text, found)]);
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
  // End to end, as Rasa's report: actions, then the gold intents, then the entities aligned
  // by position ("None" where one side has none).
  const aligned = alignEntities(entityTargets, entityPredictions);
  const targets = [...all.map((a) => a.action), ...intentTargets, ...aligned.targets];
  const predictions = [
    ...all.map((a) => a.predicted),
    ...intentPredictions,
    ...aligned.predictions,
  ];
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

/** An entity as story evaluation compares it: its message, span, type and value as a string. */
interface ComparableEntity {
  readonly text: string;
  readonly start: number;
  readonly end: number;
  readonly entity: string;
  readonly value: string;
}

/**
 * The entities of a message reduced to what Rasa's story evaluation compares (start, end, type
 * and value; an extractor's value as a string, since annotated values are strings), in text
 * order.
 */
function comparableEntities(text: string, entities: unknown): ComparableEntity[] {
  if (!Array.isArray(entities)) return [];
  const out: ComparableEntity[] = [];
  for (const e of entities as unknown[]) {
    if (e === null || typeof e !== 'object') continue;
    const r = e as Record<string, unknown>;
    if (typeof r.start !== 'number' || typeof r.end !== 'number') continue;
    const value = r.value;
    out.push({
      text,
      start: r.start,
      end: r.end,
      entity: typeof r.entity === 'string' ? r.entity : '',
      value: typeof value === 'string' ? value : JSON.stringify(value ?? null),
    });
  }
  return out.sort((a, b) => a.start - b.start || a.end - b.end);
}

function sameEntities(a: readonly ComparableEntity[], b: readonly ComparableEntity[]): boolean {
  return (
    a.length === b.length &&
    a.every((x, i) => {
      const y = b[i];
      return (
        y !== undefined &&
        x.start === y.start &&
        x.end === y.end &&
        x.entity === y.entity &&
        x.value === y.value
      );
    })
  );
}

/** An entity as a training-data annotation: `[7](number)`, or `[seven]{"entity": …}` with a value. */
function entityLabel(e: ComparableEntity): string {
  const span = e.text.slice(e.start, e.end);
  if (e.value === span || e.value === '') return `[${span}](${e.entity})`;
  return `[${span}]{"entity": ${JSON.stringify(e.entity)}, "value": ${JSON.stringify(e.value)}}`;
}

/** The text with the entities marked as in training data (Rasa's comment on a wrong message). */
function annotatedText(text: string, entities: readonly ComparableEntity[]): string {
  let out = '';
  let at = 0;
  for (const e of entities) {
    if (e.start < at) continue;
    out += text.slice(at, e.start) + entityLabel(e);
    at = e.end;
  }
  return out + text.slice(at);
}

/**
 * Gold and predicted entities of every message aligned as Rasa's evaluation store does: per
 * message text, in order of start then end; the same span pairs up, an entity the other side
 * lacks pairs with "None".
 */
function alignEntities(
  targets: readonly ComparableEntity[],
  predictions: readonly ComparableEntity[],
): { targets: string[]; predictions: string[] } {
  const byText = new Map<string, { gold: ComparableEntity[]; found: ComparableEntity[] }>();
  const group = (text: string) => {
    let g = byText.get(text);
    if (g === undefined) byText.set(text, (g = { gold: [], found: [] }));
    return g;
  };
  for (const e of targets) group(e.text).gold.push(e);
  for (const e of predictions) group(e.text).found.push(e);
  const out = { targets: [] as string[], predictions: [] as string[] };
  const order = (a: ComparableEntity, b: ComparableEntity): number => a.start - b.start;
  for (const text of [...byText.keys()].sort()) {
    const { gold, found } = byText.get(text) ?? { gold: [], found: [] };
    gold.sort(order);
    found.sort(order);
    let i = 0;
    let j = 0;
    while (i < found.length || j < gold.length) {
      const p = found[i];
      const g = gold[j];
      const cmp = p && g ? Math.sign(p.start - g.start) || Math.sign(p.end - g.end) : g ? 1 : -1;
      if (cmp < 0 && p) {
        out.predictions.push(entityLabel(p));
        out.targets.push('None');
        i++;
      } else if (cmp > 0 && g) {
        out.targets.push(entityLabel(g));
        out.predictions.push('None');
        j++;
      } else if (p && g) {
        out.predictions.push(entityLabel(p));
        out.targets.push(entityLabel(g));
        i++;
        j++;
      }
    }
  }
  return out;
}
