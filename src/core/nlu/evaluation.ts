import { NLU_FALLBACK_INTENT } from 'src/core/nlu/components/simple-components';
import { type ParsedEntity, type Token } from 'src/core/nlu/message';
import { type TrainedNlu } from 'src/core/nlu/pipeline';
import {
  baseIntent,
  isRetrievalIntent,
  type EntityAnnotation,
  type NluTrainingData,
} from 'src/core/training-data/nlu-training-data';

export const NO_ENTITY = 'no_entity';

export interface LabelMetrics {
  precision: number;
  recall: number;
  'f1-score': number;
  support: number;
  confused_with?: Record<string, number>;
}

/** sklearn `classification_report(output_dict=True)` plus Rasa's `confused_with`. */
export type ClassificationReport = Record<string, LabelMetrics | number>;

export interface EvaluationSummary<P, E> {
  report: ClassificationReport;
  precision: number;
  f1_score: number;
  accuracy: number;
  predictions: P[];
  errors: E[];
}

export interface IntentPredictionRecord {
  text: string;
  intent: string;
  predicted: string;
  confidence: number;
}

export interface IntentErrorRecord {
  text: string;
  intent: string;
  intent_prediction: { name: string; confidence: number };
}

export interface ResponsePredictionRecord {
  text: string;
  intent_response_key_target: string;
  intent_response_key_prediction: string;
  confidence: number;
}

export interface ResponseErrorRecord {
  text: string;
  intent_response_key_target: string;
  intent_response_key_prediction: { name: string; confidence: number };
}

export interface EntityErrorRecord {
  text: string;
  entities: EntityAnnotation[];
  predicted_entities: ParsedEntity[];
}

export type EntityEvaluation = Omit<EvaluationSummary<never, EntityErrorRecord>, 'predictions'>;

/** Result shape of `rasa test nlu` / `POST /model/test/intents`. */
export interface NluEvaluation {
  intent_evaluation: EvaluationSummary<IntentPredictionRecord, IntentErrorRecord> | null;
  response_selection_evaluation: EvaluationSummary<
    ResponsePredictionRecord,
    ResponseErrorRecord
  > | null;
  entity_evaluation: Record<string, EntityEvaluation>;
}

const byText = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/**
 * sklearn metrics over the labels of the targets (minus `exclude`): per-label P/R/F1/support,
 * `accuracy` when those labels cover every prediction (else `micro avg`), `macro avg`,
 * `weighted avg`; returns weighted precision/F1 and plain accuracy like Rasa.
 */
export function classificationReport(
  targets: readonly string[],
  predictions: readonly string[],
  exclude: string | null = null,
): { report: ClassificationReport; precision: number; f1: number; accuracy: number } {
  const labels = [...new Set(targets)].filter((l) => l !== exclude).sort(byText);
  const correct = targets.filter((t, i) => t === predictions[i]).length;
  const accuracy = targets.length ? correct / targets.length : 0;
  if (labels.length === 0) return { report: {}, precision: 0, f1: 0, accuracy: 0 };
  const report: ClassificationReport = {};
  const tp = new Map<string, number>();
  const fp = new Map<string, number>();
  const fn = new Map<string, number>();
  targets.forEach((t, i) => {
    const p = predictions[i] ?? '';
    if (t === p) tp.set(t, (tp.get(t) ?? 0) + 1);
    else {
      fn.set(t, (fn.get(t) ?? 0) + 1);
      fp.set(p, (fp.get(p) ?? 0) + 1);
    }
  });
  const f = (p: number, r: number): number => (p + r > 0 ? (2 * p * r) / (p + r) : 0);
  let sumTp = 0;
  let sumFp = 0;
  let sumFn = 0;
  let totalSupport = 0;
  const macro = { precision: 0, recall: 0, f1: 0 };
  const weighted = { precision: 0, recall: 0, f1: 0 };
  for (const label of labels) {
    const a = tp.get(label) ?? 0;
    const b = fp.get(label) ?? 0;
    const c = fn.get(label) ?? 0;
    const precision = a + b ? a / (a + b) : 0;
    const recall = a + c ? a / (a + c) : 0;
    const support = a + c;
    report[label] = { precision, recall, 'f1-score': f(precision, recall), support };
    sumTp += a;
    sumFp += b;
    sumFn += c;
    totalSupport += support;
    macro.precision += precision / labels.length;
    macro.recall += recall / labels.length;
    macro.f1 += f(precision, recall) / labels.length;
    weighted.precision += precision * support;
    weighted.recall += recall * support;
    weighted.f1 += f(precision, recall) * support;
  }
  const all = new Set([...targets, ...predictions]);
  const covers = [...all].every((l) => labels.includes(l));
  if (covers) report['accuracy'] = accuracy;
  else {
    const p = sumTp + sumFp ? sumTp / (sumTp + sumFp) : 0;
    const r = sumTp + sumFn ? sumTp / (sumTp + sumFn) : 0;
    report['micro avg'] = { precision: p, recall: r, 'f1-score': f(p, r), support: totalSupport };
  }
  report['macro avg'] = {
    precision: macro.precision,
    recall: macro.recall,
    'f1-score': macro.f1,
    support: totalSupport,
  };
  const w = totalSupport || 1;
  report['weighted avg'] = {
    precision: weighted.precision / w,
    recall: weighted.recall / w,
    'f1-score': weighted.f1 / w,
    support: totalSupport,
  };
  addConfusions(report, targets, predictions, exclude);
  return { report, precision: weighted.precision / w, f1: weighted.f1 / w, accuracy };
}

/** Rasa `_add_confused_labels_to_report`: up to three most frequent wrong predictions per label. */
function addConfusions(
  report: ClassificationReport,
  targets: readonly string[],
  predictions: readonly string[],
  exclude: string | null,
): void {
  const labels = [...new Set([...targets, ...predictions])].sort(byText);
  const candidates = Math.min(3, labels.length);
  for (const label of labels) {
    if (label === exclude) continue;
    const entry = report[label];
    if (typeof entry !== 'object') continue;
    const row = new Map<string, number>();
    targets.forEach((t, i) => {
      if (t === label) row.set(predictions[i] ?? '', (row.get(predictions[i] ?? '') ?? 0) + 1);
    });
    const top = labels
      .map((l) => [l, row.get(l) ?? 0] as const)
      .sort((a, b) => b[1] - a[1])
      .slice(0, candidates);
    entry.confused_with = {};
    for (const [l, n] of top) {
      if (l !== label && l !== exclude && n > 0) entry.confused_with[l] = n;
    }
  }
}

function tokenLabel(
  token: Token,
  entities: ReadonlyArray<{ start: number; end: number; entity: string }>,
): string {
  let best: string = NO_ENTITY;
  let bestOverlap = 0;
  for (const e of entities) {
    const overlap = Math.min(token.end, e.end) - Math.max(token.start, e.start);
    if (overlap > bestOverlap) {
      bestOverlap = overlap;
      best = e.entity;
    }
  }
  return best;
}

/**
 * Evaluates a trained pipeline on test data the way `rasa test nlu` does: intents (base intent of
 * retrieval examples), response selection (full `intent/response_key`) and token-level entity
 * labels per extractor. Offsets in errors are UTF-16 (JavaScript) indices.
 */
export function evaluateIntents(model: TrainedNlu, testData: NluTrainingData): NluEvaluation {
  const intentTargets: string[] = [];
  const intentPreds: string[] = [];
  const intentPredictions: IntentPredictionRecord[] = [];
  const intentErrors: IntentErrorRecord[] = [];
  const rsTargets: string[] = [];
  const rsPreds: string[] = [];
  const rsPredictions: ResponsePredictionRecord[] = [];
  const rsErrors: ResponseErrorRecord[] = [];
  const extractors = model.entityExtractors;
  const entityTargets: string[] = [];
  const entityPreds = new Map<string, string[]>(extractors.map((x) => [x, []]));
  const entityErrors = new Map<string, EntityErrorRecord[]>(extractors.map((x) => [x, []]));
  const hasIntentClassifier = model.componentNames.some((n) =>
    ['DIETClassifier', 'KeywordIntentClassifier', 'LogisticRegressionClassifier'].includes(n),
  );

  for (const ex of testData.examples) {
    const message = model.process(ex.text);
    const target = baseIntent(ex.intent);
    const predicted = message.intent?.name ?? '';
    const confidence = message.intent?.confidence ?? 0;
    if (target) {
      intentTargets.push(target);
      intentPreds.push(predicted);
      intentPredictions.push({ text: ex.text, intent: target, predicted, confidence });
      if (target !== predicted) {
        intentErrors.push({
          text: ex.text,
          intent: target,
          intent_prediction: { name: predicted, confidence },
        });
      }
    }
    if (isRetrievalIntent(ex.intent) && message.responseSelector) {
      const rs = message.responseSelector;
      const pred = rs[target] ?? rs['default'];
      const response = pred && !Array.isArray(pred) ? pred.response : null;
      const key = response?.intent_response_key ?? '';
      const conf = response?.confidence ?? 0;
      rsTargets.push(ex.intent);
      rsPreds.push(key);
      rsPredictions.push({
        text: ex.text,
        intent_response_key_target: ex.intent,
        intent_response_key_prediction: key,
        confidence: conf,
      });
      if (key !== ex.intent) {
        rsErrors.push({
          text: ex.text,
          intent_response_key_target: ex.intent,
          intent_response_key_prediction: { name: key, confidence: conf },
        });
      }
    }
    const goldLabels = message.tokens.map((t) => tokenLabel(t, ex.entities));
    entityTargets.push(...goldLabels);
    for (const x of extractors) {
      const predicted = message.entities.filter((e) => e.extractor === x);
      const labels = message.tokens.map((t) => tokenLabel(t, predicted));
      entityPreds.get(x)?.push(...labels);
      if (labels.some((l, i) => l !== goldLabels[i])) {
        entityErrors
          .get(x)
          ?.push({ text: ex.text, entities: [...ex.entities], predicted_entities: predicted });
      }
    }
  }

  const summary = <P, E>(
    targets: string[],
    preds: string[],
    predictions: P[],
    errors: E[],
  ): EvaluationSummary<P, E> => {
    const r = classificationReport(targets, preds);
    return {
      report: r.report,
      precision: r.precision,
      f1_score: r.f1,
      accuracy: r.accuracy,
      predictions,
      errors,
    };
  };

  const entityEvaluation: Record<string, EntityEvaluation> = {};
  for (const x of extractors) {
    const r = classificationReport(entityTargets, entityPreds.get(x) ?? [], NO_ENTITY);
    entityEvaluation[x] = {
      report: r.report,
      precision: r.precision,
      f1_score: r.f1,
      accuracy: r.accuracy,
      errors: entityErrors.get(x) ?? [],
    };
  }
  return {
    intent_evaluation:
      hasIntentClassifier && intentTargets.length
        ? summary(intentTargets, intentPreds, intentPredictions, intentErrors)
        : null,
    response_selection_evaluation:
      model.hasResponseSelector && rsTargets.length
        ? summary(rsTargets, rsPreds, rsPredictions, rsErrors)
        : null,
    entity_evaluation: entityEvaluation,
  };
}

export { NLU_FALLBACK_INTENT };
