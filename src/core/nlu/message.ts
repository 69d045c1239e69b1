import { type NluExample } from 'src/core/training-data/nlu-training-data';

/** A token: its text and [start, end) UTF-16 offsets into the message text. */
export interface Token {
  readonly text: string;
  readonly start: number;
  readonly end: number;
}

/** A sparse row vector: parallel index/value arrays, indices ascending and unique. */
export interface SparseVector {
  readonly idx: number[];
  readonly val: number[];
}

/** What one featurizer added to a message: one row per token, optionally a sentence row. */
export interface FeatureBlock {
  readonly featurizer: string;
  readonly dim: number;
  readonly seq: SparseVector[];
  readonly sentence: SparseVector | null;
  /** The sentence row is exactly the sum of the token rows (null sentences are, implicitly). */
  readonly sentenceIsSum?: boolean;
}

export interface IntentScore {
  name: string | null;
  confidence: number;
}

export interface IntentPrediction extends IntentScore {
  full_retrieval_intent_name?: string;
}

export interface ParsedEntity {
  entity: string;
  start: number;
  end: number;
  /** The matched text (Duckling's `body`). */
  text?: string;
  value: unknown;
  /** Pretrained extractors' confidence: 1.0 for Duckling, null for spaCy. */
  confidence?: number | null;
  /** Duckling's whole value object. */
  additional_info?: unknown;
  confidence_entity?: number;
  role?: string;
  confidence_role?: number;
  group?: string;
  confidence_group?: number;
  extractor: string;
  processors?: string[];
}

export interface ResponseRankingItem {
  id: number;
  confidence: number;
  intent_response_key: string;
}

export interface ResponseSelectorPrediction {
  response: {
    id: number | null;
    responses: unknown[] | null;
    response_templates: unknown[] | null;
    confidence: number;
    intent_response_key: string | null;
    utter_action: string | null;
    template_name: string | null;
  };
  ranking: ResponseRankingItem[];
}

export interface ResponseSelectorOutput {
  all_retrieval_intents: string[];
  [retrievalIntent: string]: ResponseSelectorPrediction | string[];
}

/** The working state of a message as it flows through the pipeline. */
export interface NluMessage {
  readonly text: string;
  /** Reference time of the message in ms since the epoch ("tomorrow" is relative to it). */
  readonly time?: number | undefined;
  tokens: Token[];
  features: FeatureBlock[];
  /** Per token: regex/lookup names that matched it (RegexFeaturizer), for CRF `pattern` features. */
  patterns: Array<Record<string, boolean>>;
  intent: IntentPrediction | null;
  intentRanking: IntentScore[] | null;
  entities: ParsedEntity[];
  responseSelector: ResponseSelectorOutput | null;
  /**
   * Share (0–1) of the message's tokens that a word-level CountVectorsFeaturizer knows from
   * training; 0 for a message without tokens. Unset when no such featurizer ran. The
   * DIETClassifier scales its intent confidences down when it is below one half.
   */
  knownTokenShare?: number;
}

/** A training message: the working state plus the gold annotation it came from. */
export interface TrainingMessage extends NluMessage {
  readonly example: NluExample;
}

export function newMessage(text: string, time?: number): NluMessage {
  return {
    text,
    time,
    tokens: [],
    features: [],
    patterns: [],
    intent: null,
    intentRanking: null,
    entities: [],
    responseSelector: null,
    knownTokenShare: undefined,
  };
}

export function newTrainingMessage(example: NluExample): TrainingMessage {
  return { ...newMessage(example.text), example };
}
