import { DialogueError } from 'src/core/errors/dialogue-error';
import { isCommandGenerator } from 'src/core/flows/command-generators';
import {
  type NluComponent,
  type ParseContext,
  type ProgressCallback,
  type TrainContext,
} from 'src/core/nlu/component';
import { CountVectorsFeaturizer } from 'src/core/nlu/components/count-vectors-featurizer';
import { CRFEntityExtractor } from 'src/core/nlu/components/crf-entity-extractor';
import { DIETClassifier } from 'src/core/nlu/components/diet-classifier';
import { DucklingEntityExtractor } from 'src/core/nlu/components/duckling-entity-extractor';
import { LexicalSyntacticFeaturizer } from 'src/core/nlu/components/lexical-syntactic-featurizer';
import { RegexEntityExtractor, RegexFeaturizer } from 'src/core/nlu/components/regex-featurizer';
import { ResponseSelector } from 'src/core/nlu/components/response-selector';
import {
  EntitySynonymMapper,
  FallbackClassifier,
  KeywordIntentClassifier,
} from 'src/core/nlu/components/simple-components';
import { SpacyEntityExtractor } from 'src/core/nlu/components/spacy-entity-extractor';
import {
  WHITESPACE_TOKENIZER_DEFAULTS,
  WhitespaceTokenizer,
} from 'src/core/nlu/components/whitespace-tokenizer';
import { newMessage, newTrainingMessage, type NluMessage } from 'src/core/nlu/message';
import { toParseResult, type ParseOptions, type ParseResult } from 'src/core/nlu/parse-result';
import { defaultTrainingThreads } from 'src/core/nlu/softmax-parallel';
import { stateRecord } from 'src/core/nlu/sparse';
import { type ComponentConfig, type NluConfig } from 'src/core/training-data/config-reader';
import {
  type NluExample,
  type NluTrainingData,
  type ResponseVariation,
} from 'src/core/training-data/nlu-training-data';

export type ComponentKind = 'tokenizer' | 'featurizer' | 'classifier' | 'extractor' | 'processor';

interface ComponentDefinition {
  readonly kind: ComponentKind;
  /** Classifiers set `intent`; used to validate FallbackClassifier placement. */
  readonly classifiesIntent?: boolean;
  train(
    params: Readonly<Record<string, unknown>>,
    ctx: TrainContext,
  ): NluComponent | Promise<NluComponent>;
  load(params: Readonly<Record<string, unknown>>, state: unknown): NluComponent;
}

function tokenizer(params: Readonly<Record<string, unknown>>): WhitespaceTokenizer {
  const tp = params['token_pattern'];
  return new WhitespaceTokenizer({
    ...WHITESPACE_TOKENIZER_DEFAULTS,
    token_pattern: typeof tp === 'string' && tp ? tp : null,
  });
}

const REGISTRY: Readonly<Record<string, ComponentDefinition>> = {
  WhitespaceTokenizer: { kind: 'tokenizer', train: (p) => tokenizer(p), load: (p) => tokenizer(p) },
  RegexFeaturizer: {
    kind: 'featurizer',
    train: (p, c) => RegexFeaturizer.train(p, c),
    load: (p, s) => RegexFeaturizer.load(p, s),
  },
  LexicalSyntacticFeaturizer: {
    kind: 'featurizer',
    train: (p, c) => LexicalSyntacticFeaturizer.train(p, c),
    load: (p, s) => LexicalSyntacticFeaturizer.load(p, s),
  },
  CountVectorsFeaturizer: {
    kind: 'featurizer',
    train: (p, c) => CountVectorsFeaturizer.train(p, c),
    load: (p, s) => CountVectorsFeaturizer.load(p, s),
  },
  DIETClassifier: {
    kind: 'classifier',
    classifiesIntent: true,
    train: (p, c) => DIETClassifier.train(p, c),
    load: (p, s) => DIETClassifier.load(p, s),
  },
  /** Rasa 3.x's logistic regression: the same sparse softmax without entities. */
  LogisticRegressionClassifier: {
    kind: 'classifier',
    classifiesIntent: true,
    train: (p, c) => DIETClassifier.train({ epochs: 100, ...p, entity_recognition: false }, c),
    load: (p, s) => DIETClassifier.load(p, s),
  },
  KeywordIntentClassifier: {
    kind: 'classifier',
    classifiesIntent: true,
    train: (p, c) => KeywordIntentClassifier.train(p, c),
    load: (p, s) => KeywordIntentClassifier.load(p, s),
  },
  CRFEntityExtractor: {
    kind: 'extractor',
    train: (p, c) => CRFEntityExtractor.train(p, c),
    load: (p, s) => CRFEntityExtractor.load(p, s),
  },
  RegexEntityExtractor: {
    kind: 'extractor',
    train: (p, c) => RegexEntityExtractor.train(p, c),
    load: (p, s) => RegexEntityExtractor.load(p, s),
  },
  /** A Duckling server when `url` is set (parsing is then asynchronous), else built in. */
  DucklingEntityExtractor: {
    kind: 'extractor',
    train: (p, c) => DucklingEntityExtractor.train(p, c),
    load: (p, s) => DucklingEntityExtractor.load(p, s),
  },
  /** A rule-based substitute for spaCy's named entities (PERSON, GPE, ORG). */
  SpacyEntityExtractor: {
    kind: 'extractor',
    train: (p, c) => SpacyEntityExtractor.train(p, c),
    load: (p, s) => SpacyEntityExtractor.load(p, s),
  },
  EntitySynonymMapper: {
    kind: 'processor',
    train: (p, c) => EntitySynonymMapper.train(p, c),
    load: (p, s) => EntitySynonymMapper.load(p, s),
  },
  ResponseSelector: {
    kind: 'classifier',
    train: (p, c) => ResponseSelector.train(p, c),
    load: (p, s) => ResponseSelector.load(p, s),
  },
  FallbackClassifier: {
    kind: 'processor',
    train: (p) => FallbackClassifier.fromConfig(p),
    load: (p) => FallbackClassifier.fromConfig(p),
  },
};

/**
 * Rasa components that need Python models or services; `substituteUnsupported` maps them
 * (Rasa 2's DucklingHTTPExtractor is the DucklingEntityExtractor of Rasa 3).
 */
const UNSUPPORTED: Readonly<Record<string, string | null>> = {
  SpacyNLP: null,
  SpacyTokenizer: 'WhitespaceTokenizer',
  SpacyFeaturizer: null,
  MitieNLP: null,
  MitieTokenizer: 'WhitespaceTokenizer',
  MitieFeaturizer: null,
  MitieEntityExtractor: 'CRFEntityExtractor',
  MitieIntentClassifier: 'DIETClassifier',
  SklearnIntentClassifier: 'DIETClassifier',
  JiebaTokenizer: 'WhitespaceTokenizer',
  HFTransformersNLP: null,
  LanguageModelTokenizer: 'WhitespaceTokenizer',
  LanguageModelFeaturizer: null,
  ConveRTTokenizer: 'WhitespaceTokenizer',
  ConveRTFeaturizer: null,
  DucklingHTTPExtractor: 'DucklingEntityExtractor',
};

/** Names of the components Parley can train. */
export const SUPPORTED_COMPONENTS: readonly string[] = Object.keys(REGISTRY);

/** Rasa 3.x default pipeline (default_config.yml). */
export const DEFAULT_PIPELINE: readonly ComponentConfig[] = [
  { name: 'WhitespaceTokenizer' },
  { name: 'RegexFeaturizer' },
  { name: 'LexicalSyntacticFeaturizer' },
  { name: 'CountVectorsFeaturizer' },
  { name: 'CountVectorsFeaturizer', analyzer: 'char_wb', min_ngram: 1, max_ngram: 4 },
  { name: 'DIETClassifier', epochs: 100, constrain_similarities: true },
  { name: 'EntitySynonymMapper' },
  { name: 'ResponseSelector', epochs: 100, constrain_similarities: true },
  { name: 'FallbackClassifier', threshold: 0.3, ambiguity_threshold: 0.1 },
];

export interface TrainNluOptions {
  readonly onProgress?: ProgressCallback;
  /** Base seed of every random choice (default 42 or the component's `random_seed`). */
  readonly seed?: number;
  /** Responses from the domain (`utter_faq/ask_x` → variations), merged over the NLU file's. */
  readonly responses?: Readonly<Record<string, readonly ResponseVariation[]>>;
  /**
   * Replace Python-only components (spaCy, MITIE, Duckling, transformers) by the nearest
   * supported ones (or drop them) with a warning, instead of failing.
   */
  readonly substituteUnsupported?: boolean;
  /**
   * Threads training may use (default: 2 on a machine with 2 or more cores). The trained model is
   * the same for any value; only the time differs.
   */
  readonly threads?: number;
}

interface PipelineStep {
  readonly config: ComponentConfig;
  readonly component: NluComponent;
}

const FORMAT = 'parley-nlu/1';

/**
 * The component's parameters, with every key read recorded: `unread()` lists the declared keys
 * the component never looked at while training.
 */
function readTracked(declared: Record<string, unknown>): {
  params: Record<string, unknown>;
  unread: () => string[];
} {
  const read = new Set<string>();
  const params = new Proxy(declared, {
    get(target, key, receiver) {
      if (typeof key === 'string') read.add(key);
      return Reflect.get(target, key, receiver) as unknown;
    },
    has(target, key) {
      if (typeof key === 'string') read.add(key);
      return Reflect.has(target, key);
    },
    getOwnPropertyDescriptor(target, key) {
      if (typeof key === 'string') read.add(key);
      return Reflect.getOwnPropertyDescriptor(target, key);
    },
  });
  return { params, unread: () => Object.keys(declared).filter((k) => !read.has(k)) };
}

function paramsOf(config: ComponentConfig): Record<string, unknown> {
  const { name: _name, ...params } = config;
  return params;
}

/** Resolves the configured pipeline (default when absent), validating names and order. */
export function resolvePipeline(
  config: NluConfig,
  substituteUnsupported: boolean,
  warnings: string[],
): ComponentConfig[] {
  const requested = config.pipeline && config.pipeline.length ? config.pipeline : DEFAULT_PIPELINE;
  const out: ComponentConfig[] = [];
  requested.forEach((c, i) => {
    const line = config.pipelineLines?.[i];
    const where =
      line === undefined ? `pipeline entry ${i + 1}` : `pipeline entry ${i + 1} (line ${line})`;
    if (REGISTRY[c.name]) {
      out.push(c);
      return;
    }
    // CALM's command generators run in the dialogue turn, not in the NLU pipeline.
    if (isCommandGenerator(c.name)) return;
    if (c.name in UNSUPPORTED) {
      if (!substituteUnsupported) {
        throw new DialogueError(
          'NLU.UNSUPPORTED_COMPONENT',
          `${where}: component '${c.name}' needs Python libraries or an external service and is not supported by Parley (supported: ${SUPPORTED_COMPONENTS.join(', ')})`,
          { component: c.name, index: i, ...(line === undefined ? {} : { line }) },
        );
      }
      const replacement = UNSUPPORTED[c.name] ?? null;
      if (replacement === null) {
        warnings.push(`${where}: '${c.name}' is not supported and was left out`);
      } else {
        warnings.push(`${where}: '${c.name}' is not supported; using '${replacement}' instead`);
        if (
          !out.some((o) => o.name === replacement) ||
          REGISTRY[replacement]?.kind !== 'tokenizer'
        ) {
          out.push({ ...paramsOf(c), name: replacement });
        }
      }
      return;
    }
    throw new DialogueError(
      'NLU.UNKNOWN_COMPONENT',
      `${where}: unknown component '${c.name}' (supported: ${SUPPORTED_COMPONENTS.join(', ')})`,
      { component: c.name, index: i, ...(line === undefined ? {} : { line }) },
    );
  });
  if (substituteUnsupported) {
    // Substituted pipelines may have lost their featurizers: give the classifiers some.
    const firstModel = out.findIndex((c) =>
      ['DIETClassifier', 'ResponseSelector', 'CRFEntityExtractor'].includes(c.name),
    );
    const hasFeaturizer = out.some(
      (c, i) => REGISTRY[c.name]?.kind === 'featurizer' && (firstModel < 0 || i < firstModel),
    );
    if (firstModel >= 0 && !hasFeaturizer) {
      out.splice(
        firstModel,
        0,
        { name: 'CountVectorsFeaturizer' },
        { name: 'CountVectorsFeaturizer', analyzer: 'char_wb', min_ngram: 1, max_ngram: 4 },
      );
      warnings.push(
        'added CountVectorsFeaturizer (word and char_wb 1-4) in place of the unsupported featurizers',
      );
    }
    if (!out.some((c) => REGISTRY[c.name]?.kind === 'tokenizer') && out.length) {
      out.unshift({ name: 'WhitespaceTokenizer' });
    }
  }
  validateOrder(out);
  return out;
}

/** Components that read the text itself, not tokens: they need no tokenizer before them. */
const READS_RAW_TEXT: ReadonlySet<string> = new Set([
  'KeywordIntentClassifier',
  'RegexEntityExtractor',
  'DucklingEntityExtractor',
  'SpacyEntityExtractor',
]);

function validateOrder(pipeline: readonly ComponentConfig[]): void {
  let tokenizerSeen = false;
  let intentSeen = false;
  pipeline.forEach((c, i) => {
    const def = REGISTRY[c.name];
    if (!def) return;
    if (def.kind === 'tokenizer') {
      if (tokenizerSeen) {
        throw new DialogueError(
          'NLU.INVALID_PIPELINE',
          `pipeline entry ${i + 1}: only one tokenizer is allowed`,
        );
      }
      tokenizerSeen = true;
    } else if (!tokenizerSeen && !READS_RAW_TEXT.has(c.name)) {
      throw new DialogueError(
        'NLU.INVALID_PIPELINE',
        `pipeline entry ${i + 1}: '${c.name}' needs a tokenizer (e.g. WhitespaceTokenizer) before it`,
      );
    }
    if (def.classifiesIntent) intentSeen = true;
    if (c.name === 'FallbackClassifier' && !intentSeen) {
      throw new DialogueError(
        'NLU.INVALID_PIPELINE',
        `pipeline entry ${i + 1}: FallbackClassifier needs an intent classifier before it`,
      );
    }
  });
}

function yieldNow(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** Options of a parse. */
export interface NluParseOptions extends ParseOptions, ParseContext {
  /** Reference time in ms since the epoch (Duckling's `reftime`); default now. */
  readonly referenceTime?: number;
}

/** A trained NLU pipeline: parses text and serialises to plain JSON. */
export class TrainedNlu {
  /**
   * True when a component waits on I/O (DucklingEntityExtractor with a `url`): `parseAsync`
   * then asks it, while `parse` and `process` leave its entities out. Every other pipeline
   * parses synchronously.
   */
  readonly needsAsync: boolean;

  constructor(
    private readonly steps: readonly PipelineStep[],
    readonly language: string,
    readonly warnings: readonly string[],
  ) {
    this.needsAsync = steps.some((s) => s.component.processAsync !== undefined);
  }

  /** Component names in pipeline order. */
  get componentNames(): string[] {
    return this.steps.map((s) => s.config.name);
  }

  /** What answers in place of Rasa's components (built-in Duckling, the spaCy substitute), to log at load. */
  get notices(): string[] {
    return this.steps.flatMap((s) => (s.component.notice ? [s.component.notice] : []));
  }

  /**
   * Runs the pipeline and returns the message state (for evaluation and tests). Components that
   * wait on I/O are left out (see `needsAsync`).
   */
  process(text: string, referenceTime?: number): NluMessage {
    const message = newMessage(text, referenceTime);
    for (const step of this.steps) step.component.process(message);
    return message;
  }

  /** Runs the pipeline, awaiting the components that wait on I/O. */
  async processAsync(text: string, options: NluParseOptions = {}): Promise<NluMessage> {
    const message = newMessage(text, options.referenceTime);
    for (const step of this.steps) {
      const component = step.component;
      if (component.processAsync !== undefined) await component.processAsync(message, options);
      else component.process(message);
    }
    return message;
  }

  /** Rasa `/model/parse` shape, synchronously (see `needsAsync`). */
  parse(text: string, options: NluParseOptions = {}): ParseResult {
    return toParseResult(this.process(text, options.referenceTime), options);
  }

  /** Rasa `/model/parse` shape, with every component (a Duckling server is asked). */
  async parseAsync(text: string, options: NluParseOptions = {}): Promise<ParseResult> {
    return toParseResult(await this.processAsync(text, options), options);
  }

  /** Extractor names (for entity evaluation). */
  get entityExtractors(): string[] {
    return this.steps
      .filter((s) =>
        ['DIETClassifier', 'CRFEntityExtractor', 'RegexEntityExtractor'].includes(s.config.name),
      )
      .filter((s) => s.config['entity_recognition'] !== false)
      .map((s) => s.config.name);
  }

  get hasResponseSelector(): boolean {
    return this.steps.some((s) => s.config.name === 'ResponseSelector');
  }

  toJSON(): Record<string, unknown> {
    return {
      format: FORMAT,
      language: this.language,
      warnings: this.warnings,
      pipeline: this.steps.map((s) => ({ config: s.config, state: s.component.toJSON() })),
    };
  }
}

/** Trains the configured (or default) pipeline on the data. */
export async function trainNlu(
  data: NluTrainingData,
  config: NluConfig,
  options: TrainNluOptions = {},
): Promise<TrainedNlu> {
  const warnings: string[] = [];
  const pipeline = resolvePipeline(config, options.substituteUnsupported ?? false, warnings);
  // The model must not depend on the order examples were written in: components see them in
  // one canonical order (every shuffle after that is seeded).
  const messages = canonicalOrder(data.examples.filter((e) => e.text.length > 0)).map(
    newTrainingMessage,
  );
  const responses = { ...data.responses, ...(options.responses ?? {}) };
  const steps: PipelineStep[] = [];
  const onProgress = options.onProgress;
  const total = pipeline.length;
  const language = config.language;
  for (let i = 0; i < pipeline.length; i++) {
    const config = pipeline[i];
    if (!config) continue;
    const def = REGISTRY[config.name];
    if (!def) continue;
    const stage = `${config.name}#${i}`;
    const report = (fraction: number): void => onProgress?.(stage, fraction, { index: i, total });
    report(0);
    const ctx: TrainContext = {
      data,
      language,
      messages,
      seed: options.seed ?? 42,
      responses,
      warnings,
      index: i,
      progress: (f) => report(Math.max(0, Math.min(1, f))),
      threads: options.threads ?? defaultTrainingThreads(),
      yieldNow,
    };
    const declared = paramsOf(config);
    const seeded = options.seed !== undefined && declared['random_seed'] === undefined;
    const { params, unread } = readTracked(declared);
    if (seeded) params['random_seed'] = options.seed;
    const component = await def.train(params, ctx);
    if (def.kind === 'tokenizer' || def.kind === 'featurizer') {
      for (const m of messages) component.process(m, true);
    }
    // A key the component never looked at has no effect: say so rather than ignore it.
    const ignored = unread().filter((k) => !(seeded && k === 'random_seed'));
    if (ignored.length > 0) {
      warnings.push(
        `config.yml pipeline[${i}]: ${config.name} ignores ${ignored.map((k) => `'${k}'`).join(', ')} (no effect in Parley)`,
      );
    }
    steps.push({ config, component });
    report(1);
    await yieldNow();
  }
  return new TrainedNlu(steps, config.language, warnings);
}

/** The examples sorted by intent, text, entities and metadata (code-unit order). */
function canonicalOrder(examples: readonly NluExample[]): NluExample[] {
  const keyed = examples.map((example) => ({
    example,
    key: [
      example.intent,
      example.text,
      JSON.stringify(example.entities),
      JSON.stringify(example.metadata ?? null),
    ].join('\u0000'),
  }));
  keyed.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  return keyed.map((k) => k.example);
}

/** Restores a pipeline from TrainedNlu.toJSON(). */
export function loadNlu(json: unknown): TrainedNlu {
  const root = stateRecord(json, 'NLU model');
  if (root['format'] !== FORMAT) {
    throw new DialogueError(
      'NLU.INVALID_MODEL',
      `NLU model: unknown format ${JSON.stringify(root['format'])}`,
    );
  }
  const rawSteps = root['pipeline'];
  if (!Array.isArray(rawSteps)) {
    throw new DialogueError('NLU.INVALID_MODEL', 'NLU model: pipeline must be a list');
  }
  const steps = rawSteps.map((raw: unknown, i): PipelineStep => {
    const step = stateRecord(raw, `NLU model pipeline[${i}]`);
    const config = stateRecord(step['config'], `NLU model pipeline[${i}].config`);
    const name = config['name'];
    const def = typeof name === 'string' ? REGISTRY[name] : undefined;
    if (typeof name !== 'string' || !def) {
      throw new DialogueError(
        'NLU.UNKNOWN_COMPONENT',
        `NLU model: unknown component ${JSON.stringify(name)}`,
      );
    }
    const cfg = config as ComponentConfig;
    return { config: cfg, component: def.load(paramsOf(cfg), step['state']) };
  });
  const warnings = Array.isArray(root['warnings'])
    ? root['warnings'].filter((w): w is string => typeof w === 'string')
    : [];
  return new TrainedNlu(
    steps,
    typeof root['language'] === 'string' ? root['language'] : 'en',
    warnings,
  );
}
