export type { NluComponent, ProgressCallback } from 'src/core/nlu/component';
export { NLU_FALLBACK_INTENT } from 'src/core/nlu/components/simple-components';
export { whitespaceTokenize } from 'src/core/nlu/components/whitespace-tokenizer';
export {
  NO_ENTITY,
  classificationReport,
  evaluateIntents,
  type ClassificationReport,
  type EntityEvaluation,
  type EvaluationSummary,
  type LabelMetrics,
  type NluEvaluation,
} from 'src/core/nlu/evaluation';
export type {
  IntentPrediction,
  IntentScore,
  ParsedEntity,
  ResponseSelectorOutput,
  ResponseSelectorPrediction,
  Token,
} from 'src/core/nlu/message';
export { toParseResult, type ParseOptions, type ParseResult } from 'src/core/nlu/parse-result';
export {
  DEFAULT_PIPELINE,
  SUPPORTED_COMPONENTS,
  TrainedNlu,
  loadNlu,
  resolvePipeline,
  trainNlu,
  type NluParseOptions,
  type TrainNluOptions,
} from 'src/core/nlu/pipeline';
