import { DialogueError } from 'src/core/errors/dialogue-error';
import { ParamReader, type NluComponent, type TrainContext } from 'src/core/nlu/component';
import { EntityTagger } from 'src/core/nlu/entity-tagger';
import {
  appendFeatures,
  contextKeys,
  inverseDocumentFrequency,
  layoutOf,
  layoutWidth,
  sentenceInput,
  tokenInputs,
  type FeatureLayout,
} from 'src/core/nlu/feature-assembly';
import { type IntentScore, type NluMessage, type SparseVector } from 'src/core/nlu/message';
import { SoftmaxModel } from 'src/core/nlu/softmax-model';
import { decodeFloats, encodeFloats, stateRecord, stateStrings } from 'src/core/nlu/sparse';
import { baseIntent } from 'src/core/training-data/nlu-training-data';

/** Parameters shared by DIETClassifier and ResponseSelector. */
export interface SoftmaxComponentConfig {
  readonly epochs: number;
  readonly learning_rate: number;
  readonly hidden: number;
  readonly regularization_constant: number;
  readonly drop_rate: number;
  readonly batch_size: readonly [number, number];
  readonly random_seed: number;
  readonly ranking_length: number;
  readonly tolerance: number;
  readonly patience: number;
}

export function readSoftmaxConfig(
  component: string,
  params: Readonly<Record<string, unknown>>,
  defaultHidden: number,
  examples: number,
): SoftmaxComponentConfig {
  const r = new ParamReader(component, params);
  const hls = params['hidden_layers_sizes'];
  let hidden = defaultHidden;
  if (hls !== undefined && hls !== null) {
    const text = (hls as Record<string, unknown>)['text'];
    if (typeof hls !== 'object' || (text !== undefined && !Array.isArray(text))) {
      throw new DialogueError(
        'CONFIG.INVALID',
        `${component}: hidden_layers_sizes.text must be a list of sizes`,
      );
    }
    if (Array.isArray(text)) hidden = typeof text[0] === 'number' ? text[0] : 0;
  }
  const bs = params['batch_size'];
  // Default: Rasa's [64, 256], shrunk for tiny data sets so that an epoch has several steps.
  let batch: [number, number] = [
    Math.min(64, Math.max(8, Math.ceil(examples / 16))),
    Math.min(256, Math.max(32, Math.ceil(examples / 4))),
  ];
  if (typeof bs === 'number') batch = [bs, bs];
  else if (Array.isArray(bs) && typeof bs[0] === 'number' && typeof bs[1] === 'number') {
    batch = [bs[0], bs[1]];
  }
  const epochs = r.number('epochs', 300);
  if (epochs < 1) throw new DialogueError('CONFIG.INVALID', `${component}: epochs must be >= 1`);
  return {
    epochs,
    learning_rate: r.number('learning_rate', 0.01),
    hidden,
    regularization_constant: r.number('regularization_constant', 0.0002),
    drop_rate: r.number('drop_rate', 0.2),
    batch_size: batch,
    random_seed: r.number('random_seed', 42),
    ranking_length: r.number('ranking_length', 10),
    tolerance: r.number('early_stopping_tolerance', 0.001),
    patience: r.number('early_stopping_patience', 10),
  };
}

/** Ranked label scores, top `rankingLength` (0 = all). */
export function rank(
  labels: readonly string[],
  probs: Float64Array,
  rankingLength: number,
): IntentScore[] {
  const order = labels.map((_, i) => i).sort((a, b) => (probs[b] ?? 0) - (probs[a] ?? 0) || a - b);
  const top = rankingLength > 0 ? order.slice(0, rankingLength) : order;
  return top.map((i) => ({ name: labels[i] ?? null, confidence: probs[i] ?? 0 }));
}

/**
 * Rasa's DIETClassifier contract on a lighter model: the intent is a sparse softmax classifier
 * (linear by default, one ReLU layer with hidden_layers_sizes.text) over the sentence features of
 * all featurizers; entities come from a BILOU linear-chain CRF over token features plus
 * neighbour-word context, with role and group CRFs (i.e. DIET with zero transformer layers).
 */
export class DIETClassifier implements NluComponent {
  static readonly componentName = 'DIETClassifier';
  readonly name = DIETClassifier.componentName;
  private readonly contextIndex: Map<string, number>;

  private constructor(
    private readonly layout: FeatureLayout,
    private readonly labels: readonly string[],
    private readonly model: SoftmaxModel | null,
    private readonly idf: Float32Array | null,
    private readonly tagger: EntityTagger | null,
    private readonly contextVocabulary: readonly string[],
    private readonly rankingLength: number,
  ) {
    this.contextIndex = new Map(contextVocabulary.map((k, i) => [k, i]));
  }

  static async train(
    params: Readonly<Record<string, unknown>>,
    ctx: TrainContext,
  ): Promise<DIETClassifier> {
    const config = readSoftmaxConfig(
      DIETClassifier.componentName,
      params,
      128,
      ctx.messages.length,
    );
    const r = new ParamReader(DIETClassifier.componentName, params);
    const doIntents = r.bool('intent_classification', true);
    const doEntities = r.bool('entity_recognition', true);
    const messages = ctx.messages;
    const first = messages[0];
    const layout = first ? layoutOf(first) : [];
    if (layout.length === 0 && messages.length > 0) {
      throw new DialogueError(
        'NLU.INVALID_PIPELINE',
        'DIETClassifier needs at least one featurizer before it in the pipeline',
      );
    }
    const width = layoutWidth(layout);
    const withIntent = messages.filter((m) => m.example.intent);
    const labels = doIntents
      ? [...new Set(withIntent.map((m) => baseIntent(m.example.intent)))].sort()
      : [];
    const entitiesWanted = doEntities && EntityTaggerHas(messages);
    const intentShare = entitiesWanted ? 0.6 : 1;
    let model: SoftmaxModel | null = null;
    let idf: Float32Array | null = null;
    if (labels.length > 0) {
      const index = new Map(labels.map((l, i) => [l, i]));
      if (r.bool('use_idf', true)) {
        idf = inverseDocumentFrequency(
          withIntent.map((m) => sentenceInput(m, layout)),
          width,
        );
      }
      const rows = withIntent.map((m) => sentenceInput(m, layout, idf));
      const y = withIntent.map((m) => index.get(baseIntent(m.example.intent)) ?? 0);
      model = await SoftmaxModel.train(rows, y, {
        inputDim: width,
        classes: labels.length,
        hidden: config.hidden,
        epochs: config.epochs,
        learningRate: config.learning_rate,
        l2: config.regularization_constant,
        dropRate: config.drop_rate,
        batchSizes: config.batch_size,
        seed: config.random_seed + ctx.index,
        tolerance: config.tolerance,
        patience: config.patience,
        onEpoch: async (epoch) => {
          ctx.progress((intentShare * (epoch + 1)) / config.epochs);
          if (epoch % 10 === 9) await ctx.yieldNow();
        },
      });
    }
    let tagger: EntityTagger | null = null;
    const contextVocabulary: string[] = [];
    if (entitiesWanted) {
      const seen = new Set<string>();
      for (const m of messages) {
        for (const keys of contextKeys(m)) for (const k of keys) seen.add(k);
      }
      contextVocabulary.push(...[...seen].sort());
      const ctxIndex = new Map(contextVocabulary.map((k, i) => [k, i]));
      const features = messages.map((m) =>
        appendFeatures(
          tokenInputs(m, layout),
          contextKeys(m).map((keys) => keys.map((k) => ctxIndex.get(k) ?? 0)),
          width,
        ),
      );
      tagger = await EntityTagger.train(messages, features, width + contextVocabulary.length, {
        bilou: r.bool('BILOU_flag', true),
        splitByComma: readSplitByComma(params['split_entities_by_comma']),
        epochs: r.number('crf_epochs', 30),
        l2: r.number('crf_l2', 0.1),
        learningRate: r.number('crf_learning_rate', 0.1),
        seed: config.random_seed + 7 + ctx.index,
        onEpoch: async (f) => {
          ctx.progress(intentShare + (1 - intentShare) * f);
          await ctx.yieldNow();
        },
      });
    }
    return new DIETClassifier(
      layout,
      labels,
      model,
      idf,
      tagger,
      contextVocabulary,
      config.ranking_length,
    );
  }

  static load(_config: Readonly<Record<string, unknown>>, state: unknown): DIETClassifier {
    const s = stateRecord(state, 'DIETClassifier');
    const layout = Array.isArray(s['layout']) ? (s['layout'] as number[]) : [];
    return new DIETClassifier(
      layout,
      stateStrings(s['labels'], 'DIETClassifier.labels'),
      s['model'] ? SoftmaxModel.fromJSON(s['model'], 'DIETClassifier.model') : null,
      s['idf'] ? decodeFloats(s['idf'], layoutWidth(layout), 'DIETClassifier.idf') : null,
      s['tagger'] ? EntityTagger.fromJSON(s['tagger'], 'DIETClassifier.tagger') : null,
      stateStrings(s['contextVocabulary'] ?? [], 'DIETClassifier.contextVocabulary'),
      typeof s['rankingLength'] === 'number' ? s['rankingLength'] : 10,
    );
  }

  private tokenFeatures(message: NluMessage): SparseVector[] {
    const width = layoutWidth(this.layout);
    return appendFeatures(
      tokenInputs(message, this.layout),
      contextKeys(message).map((keys) =>
        keys.map((k) => this.contextIndex.get(k)).filter((i): i is number => i !== undefined),
      ),
      width,
    );
  }

  process(message: NluMessage): void {
    if (this.model && this.labels.length > 0) {
      const probs = this.model.predict(sentenceInput(message, this.layout, this.idf));
      const ranking = rank(this.labels, probs, this.rankingLength);
      const top = ranking[0];
      if (top) {
        message.intent = { name: top.name, confidence: top.confidence };
        message.intentRanking = ranking;
      }
    }
    if (this.tagger) {
      message.entities.push(
        ...this.tagger.extract(message, this.tokenFeatures(message), this.name),
      );
    }
  }

  toJSON(): unknown {
    return {
      layout: this.layout,
      labels: this.labels,
      model: this.model?.toJSON() ?? null,
      idf: this.idf ? encodeFloats(this.idf) : null,
      tagger: this.tagger?.toJSON() ?? null,
      contextVocabulary: this.contextVocabulary,
      rankingLength: this.rankingLength,
    };
  }
}

function EntityTaggerHas(messages: TrainContext['messages']): boolean {
  return EntityTagger.hasEntities(messages);
}

export function readSplitByComma(raw: unknown): boolean | Record<string, boolean> {
  if (raw === undefined || raw === null) return true;
  if (typeof raw === 'boolean') return raw;
  if (typeof raw === 'object' && !Array.isArray(raw)) {
    const out: Record<string, boolean> = {};
    for (const [k, v] of Object.entries(raw as Record<string, unknown>)) out[k] = v !== false;
    return out;
  }
  throw new DialogueError(
    'CONFIG.INVALID',
    'split_entities_by_comma must be true/false or a map of entity → bool',
  );
}
