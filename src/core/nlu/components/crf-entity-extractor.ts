import { DialogueError } from 'src/core/errors/dialogue-error';
import { ParamReader, type NluComponent, type TrainContext } from 'src/core/nlu/component';
import { readSplitByComma } from 'src/core/nlu/components/diet-classifier';
import { windowPositions } from 'src/core/nlu/components/lexical-syntactic-featurizer';
import { EntityTagger } from 'src/core/nlu/entity-tagger';
import { type NluMessage, type SparseVector, type Token } from 'src/core/nlu/message';
import { pyIsDigit, pyIsTitle, pyIsUpper } from 'src/core/nlu/python-string';
import { stateRecord, stateStrings } from 'src/core/nlu/sparse';

export const CRF_DEFAULT_FEATURES: readonly (readonly string[])[] = [
  ['low', 'title', 'upper'],
  [
    'low',
    'bias',
    'prefix5',
    'prefix2',
    'suffix5',
    'suffix3',
    'suffix2',
    'upper',
    'title',
    'digit',
    'pattern',
  ],
  ['low', 'title', 'upper'],
];

type TokenFeature = (token: Token, patterns: Readonly<Record<string, boolean>>) => string[];

const chars = (s: string): string[] => [...s];
const FUNCTIONS: Record<string, TokenFeature> = {
  low: (t) => [t.text.toLowerCase()],
  title: (t) => [String(pyIsTitle(t.text))],
  upper: (t) => [String(pyIsUpper(t.text))],
  digit: (t) => [String(pyIsDigit(t.text))],
  bias: () => ['bias'],
  prefix5: (t) => [chars(t.text).slice(0, 5).join('')],
  prefix2: (t) => [chars(t.text).slice(0, 2).join('')],
  suffix5: (t) => [chars(t.text).slice(-5).join('')],
  suffix3: (t) => [chars(t.text).slice(-3).join('')],
  suffix2: (t) => [chars(t.text).slice(-2).join('')],
  suffix1: (t) => [chars(t.text).slice(-1).join('')],
  pattern: (_t, p) => Object.keys(p).filter((k) => p[k]),
  // Dense features come from spaCy/LM featurizers, which Parley does not have.
  text_dense_features: () => [],
};

function validateFeatures(raw: unknown): string[][] {
  if (raw === undefined || raw === null) return CRF_DEFAULT_FEATURES.map((r) => [...r]);
  if (
    !Array.isArray(raw) ||
    !raw.every((r) => Array.isArray(r) && r.every((f) => typeof f === 'string'))
  ) {
    throw new DialogueError(
      'CONFIG.INVALID',
      'CRFEntityExtractor: features must be a list of lists of names',
    );
  }
  for (const f of raw.flat()) {
    if (!(f in FUNCTIONS)) {
      throw new DialogueError(
        'CONFIG.INVALID',
        `CRFEntityExtractor: unsupported feature '${f}' (supported: ${Object.keys(FUNCTIONS).join(', ')})`,
      );
    }
  }
  return raw;
}

/** Rasa's CRFEntityExtractor: crfsuite-style string window features into a linear-chain CRF. */
export class CRFEntityExtractor implements NluComponent {
  static readonly componentName = 'CRFEntityExtractor';
  readonly name = CRFEntityExtractor.componentName;
  private readonly index: Map<string, number>;
  private readonly positions: number[];

  private constructor(
    private readonly features: readonly (readonly string[])[],
    private readonly vocabulary: readonly string[],
    private readonly tagger: EntityTagger | null,
  ) {
    this.index = new Map(vocabulary.map((k, i) => [k, i]));
    this.positions = windowPositions(features.length);
  }

  private keys(message: NluMessage): string[][] {
    const tokens = message.tokens;
    return tokens.map((_, i) => {
      const out: string[] = [];
      this.positions.forEach((pos, row) => {
        const token = tokens[i + pos];
        if (!token) return;
        for (const f of this.features[row] ?? []) {
          const fn = FUNCTIONS[f];
          if (!fn) continue;
          for (const v of fn(token, message.patterns[i + pos] ?? {})) out.push(`${pos}:${f}:${v}`);
        }
      });
      return out;
    });
  }

  private rows(message: NluMessage): SparseVector[] {
    return this.keys(message).map((keys) => {
      const idx = [
        ...new Set(keys.map((k) => this.index.get(k)).filter((i): i is number => i !== undefined)),
      ];
      idx.sort((a, b) => a - b);
      return { idx, val: idx.map(() => 1) };
    });
  }

  static async train(
    params: Readonly<Record<string, unknown>>,
    ctx: TrainContext,
  ): Promise<CRFEntityExtractor> {
    const r = new ParamReader(CRFEntityExtractor.componentName, params);
    const features = validateFeatures(params['features']);
    const probe = new CRFEntityExtractor(features, [], null);
    const seen = new Set<string>();
    for (const m of ctx.messages) {
      for (const keys of probe.keys(m)) for (const k of keys) seen.add(k);
    }
    const vocabulary = [...seen].sort();
    const extractor = new CRFEntityExtractor(features, vocabulary, null);
    if (!EntityTagger.hasEntities(ctx.messages)) {
      ctx.warnings.push('CRFEntityExtractor: no entity annotations in the training data');
      return extractor;
    }
    const rows = ctx.messages.map((m) => extractor.rows(m));
    const tagger = await EntityTagger.train(ctx.messages, rows, vocabulary.length, {
      bilou: r.bool('BILOU_flag', true),
      splitByComma: readSplitByComma(params['split_entities_by_comma']),
      epochs: r.number('max_iterations', 50),
      l2: r.number('L2_c', 0.1),
      learningRate: r.number('learning_rate', 0.1),
      seed: r.number('random_seed', 42) + ctx.index,
      onEpoch: async (f) => {
        ctx.progress(f);
        await ctx.yieldNow();
      },
    });
    return new CRFEntityExtractor(features, vocabulary, tagger);
  }

  static load(config: Readonly<Record<string, unknown>>, state: unknown): CRFEntityExtractor {
    const s = stateRecord(state, 'CRFEntityExtractor');
    return new CRFEntityExtractor(
      validateFeatures(s['features'] ?? config['features']),
      stateStrings(s['vocabulary'], 'CRFEntityExtractor.vocabulary'),
      s['tagger'] ? EntityTagger.fromJSON(s['tagger'], 'CRFEntityExtractor.tagger') : null,
    );
  }

  process(message: NluMessage): void {
    if (!this.tagger) return;
    message.entities.push(...this.tagger.extract(message, this.rows(message), this.name));
  }

  toJSON(): unknown {
    return {
      features: this.features,
      vocabulary: this.vocabulary,
      tagger: this.tagger?.toJSON() ?? null,
    };
  }
}
