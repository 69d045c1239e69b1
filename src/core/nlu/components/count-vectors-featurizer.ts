import { DialogueError } from 'src/core/errors/dialogue-error';
import { ParamReader, type NluComponent, type TrainContext } from 'src/core/nlu/component';
import { type FeatureBlock, type NluMessage, type SparseVector } from 'src/core/nlu/message';
import { compilePythonRegex } from 'src/core/nlu/python-regex';
import { stateRecord, stateStrings, sumRows, vectorFromCounts } from 'src/core/nlu/sparse';

export type Analyzer = 'word' | 'char' | 'char_wb';

export interface CountVectorsConfig {
  readonly analyzer: Analyzer;
  readonly min_ngram: number;
  readonly max_ngram: number;
  readonly min_df: number;
  readonly max_df: number;
  readonly max_features: number | null;
  readonly lowercase: boolean;
  readonly strip_accents: 'ascii' | 'unicode' | null;
  readonly stop_words: readonly string[];
  readonly OOV_token: string | null;
  readonly OOV_words: readonly string[];
  readonly token_pattern: string | null;
}

const NUMBER = /(?<![\p{L}\p{M}\p{Nd}\p{Pc}])[0-9]+(?![\p{L}\p{M}\p{Nd}\p{Pc}])/gu;
/** sklearn's default word token pattern as Rasa configures it: `(?u)\b\w+\b`. */
const DEFAULT_TOKEN_PATTERN = /[\p{L}\p{M}\p{Nd}\p{Pc}]+/gu;

export function readCountVectorsConfig(
  params: Readonly<Record<string, unknown>>,
): CountVectorsConfig {
  const r = new ParamReader('CountVectorsFeaturizer', params);
  const analyzer = r.string('analyzer', 'word');
  if (analyzer !== 'word' && analyzer !== 'char' && analyzer !== 'char_wb') {
    throw new DialogueError(
      'CONFIG.INVALID',
      `CountVectorsFeaturizer: analyzer must be word, char or char_wb (got '${analyzer}')`,
    );
  }
  const stripAccents = r.optionalString('strip_accents');
  if (stripAccents !== null && stripAccents !== 'ascii' && stripAccents !== 'unicode') {
    throw new DialogueError(
      'CONFIG.INVALID',
      'CountVectorsFeaturizer: strip_accents must be ascii or unicode',
    );
  }
  const stop = r.raw('stop_words');
  const minNgram = r.number('min_ngram', 1);
  const maxNgram = r.number('max_ngram', 1);
  if (minNgram < 1 || maxNgram < minNgram) {
    throw new DialogueError(
      'CONFIG.INVALID',
      'CountVectorsFeaturizer: need 1 <= min_ngram <= max_ngram',
    );
  }
  return {
    analyzer,
    min_ngram: minNgram,
    max_ngram: maxNgram,
    min_df: r.number('min_df', 1),
    max_df: r.number('max_df', 1.0),
    max_features: r.numberOrNull('max_features', null),
    lowercase: r.bool('lowercase', true),
    strip_accents: stripAccents,
    stop_words: Array.isArray(stop) ? r.stringList('stop_words', []) : [],
    OOV_token: r.optionalString('OOV_token'),
    OOV_words: r.stringList('OOV_words', []),
    token_pattern: r.optionalString('token_pattern'),
  };
}

function stripAccents(s: string): string {
  return s.normalize('NFKD').replace(/\p{M}/gu, '');
}

/** sklearn `_char_wb_ngrams` on a (lower-cased, whitespace-collapsed) document. */
export function charWbNgrams(doc: string, minN: number, maxN: number): string[] {
  const out: string[] = [];
  for (const word of doc.split(/\s+/u)) {
    if (!word) continue;
    const w = [...` ${word} `];
    const len = w.length;
    for (let n = minN; n <= maxN; n++) {
      let offset = 0;
      out.push(w.slice(offset, offset + n).join(''));
      while (offset + n < len) {
        offset += 1;
        out.push(w.slice(offset, offset + n).join(''));
      }
      if (offset === 0) break;
    }
  }
  return out;
}

/** sklearn `_char_ngrams`. */
export function charNgrams(doc: string, minN: number, maxN: number): string[] {
  const chars = [...doc.replace(/\s+/gu, ' ')];
  const out: string[] = [];
  for (let n = minN; n <= Math.min(maxN, chars.length); n++) {
    for (let i = 0; i + n <= chars.length; i++) out.push(chars.slice(i, i + n).join(''));
  }
  return out;
}

/**
 * A feature block whose sentence row is the sum of its token rows, built on first use (the
 * intent model can do without it). A class rather than an object literal with a getter: V8
 * creates literals with accessors on a slow path, which cost more than the rest of process().
 */
class SummedRowsBlock implements FeatureBlock {
  readonly sentenceIsSum = true;
  private summed: SparseVector | null = null;

  constructor(
    readonly featurizer: string,
    readonly dim: number,
    readonly seq: SparseVector[],
  ) {}

  get sentence(): SparseVector {
    return (this.summed ??= sumRows(this.seq));
  }
}

/** Bag of words / character n-grams (Rasa CountVectorsFeaturizer on the text attribute). */
export class CountVectorsFeaturizer implements NluComponent {
  static readonly componentName = 'CountVectorsFeaturizer';
  readonly name = CountVectorsFeaturizer.componentName;
  private readonly index: Map<string, number>;
  private readonly tokenPattern: RegExp;
  private readonly stopWords: Set<string>;
  private readonly oovWords: Set<string>;
  private readonly cache = new Map<string, SparseVector>();
  private readonly tokenCache = new Map<string, string>();
  /** Raw token text → its row, where a row depends on the token alone (see process). */
  private readonly rawCache = new Map<string, SparseVector>();

  constructor(
    readonly config: CountVectorsConfig,
    readonly vocabulary: readonly string[],
  ) {
    this.index = new Map(vocabulary.map((t, i) => [t, i]));
    this.tokenPattern = config.token_pattern
      ? compilePythonRegex(config.token_pattern, true)
      : DEFAULT_TOKEN_PATTERN;
    this.stopWords = new Set(config.stop_words);
    this.oovWords = new Set(config.OOV_words.map((w) => (config.lowercase ? w.toLowerCase() : w)));
  }

  /** Rasa `_process_tokens`: numbers → __NUMBER__, lower-casing, accents. */
  private processToken(text: string): string {
    const cached = this.tokenCache.get(text);
    if (cached !== undefined) return cached;
    let t = text.replace(NUMBER, '__NUMBER__');
    if (this.config.lowercase) t = t.toLowerCase();
    if (this.config.strip_accents) t = stripAccents(t);
    if (this.tokenCache.size < 50000) this.tokenCache.set(text, t);
    return t;
  }

  /** sklearn analyzer on one document. */
  private analyze(doc: string): string[] {
    const { analyzer, min_ngram: minN, max_ngram: maxN } = this.config;
    if (analyzer === 'char_wb') return charWbNgrams(doc, minN, maxN);
    if (analyzer === 'char') return charNgrams(doc, minN, maxN);
    this.tokenPattern.lastIndex = 0;
    const words = [...doc.matchAll(this.tokenPattern)]
      .map((m) => m[0])
      .filter((w) => !this.stopWords.has(w));
    if (maxN === 1 && minN === 1) return words;
    const out: string[] = [];
    for (let n = minN; n <= maxN; n++) {
      for (let i = 0; i + n <= words.length; i++) out.push(words.slice(i, i + n).join(' '));
    }
    return out;
  }

  private tokensOf(message: NluMessage, training: boolean): string[] {
    const tokens = message.tokens.map((t) => this.processToken(t.text));
    if (this.config.analyzer !== 'word' || !this.config.OOV_token) return tokens;
    const oov = this.config.OOV_token;
    if (training) return tokens.map((t) => (this.oovWords.has(t) ? oov : t));
    if (!this.index.has(oov)) return tokens;
    return tokens.map((t) => (this.analyze(t).every((g) => this.index.has(g)) ? t : oov));
  }

  private vectorize(doc: string): SparseVector {
    const cached = this.cache.get(doc);
    if (cached) return cached;
    const counts = new Map<number, number>();
    for (const gram of this.analyze(doc)) {
      const col = this.index.get(gram);
      if (col !== undefined) counts.set(col, (counts.get(col) ?? 0) + 1);
    }
    const v = vectorFromCounts(counts);
    if (this.cache.size < 50000) this.cache.set(doc, v);
    return v;
  }

  static train(
    params: Readonly<Record<string, unknown>>,
    ctx: TrainContext,
  ): CountVectorsFeaturizer {
    const config = readCountVectorsConfig(params);
    const probe = new CountVectorsFeaturizer(config, []);
    const df = new Map<string, number>();
    const tf = new Map<string, number>();
    const docs = ctx.messages.filter((m) => m.tokens.length > 0);
    for (const m of docs) {
      const grams = probe.analyze(probe.tokensOf(m, true).join(' '));
      for (const g of grams) tf.set(g, (tf.get(g) ?? 0) + 1);
      for (const g of new Set(grams)) df.set(g, (df.get(g) ?? 0) + 1);
    }
    const n = docs.length;
    // int → document count, float in (0, 1) → proportion; 1 / 1.0 are indistinguishable in JS.
    const minDf = config.min_df < 1 ? config.min_df * n : config.min_df;
    const maxDf = config.max_df <= 1 ? config.max_df * n : config.max_df;
    let terms = [...df].filter(([, d]) => d >= minDf && d <= maxDf).map(([t]) => t);
    if (config.max_features !== null && terms.length > config.max_features) {
      terms = terms
        .sort((a, b) => (tf.get(b) ?? 0) - (tf.get(a) ?? 0) || (a < b ? -1 : 1))
        .slice(0, config.max_features);
    }
    terms.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    if (terms.length === 0) {
      ctx.warnings.push(`CountVectorsFeaturizer (${config.analyzer}): empty vocabulary`);
    }
    return new CountVectorsFeaturizer(config, terms);
  }

  static load(config: Readonly<Record<string, unknown>>, state: unknown): CountVectorsFeaturizer {
    const s = stateRecord(state, 'CountVectorsFeaturizer');
    return new CountVectorsFeaturizer(
      readCountVectorsConfig(config),
      stateStrings(s['vocabulary'], 'CountVectorsFeaturizer.vocabulary'),
    );
  }

  /**
   * Records on the message the share of its tokens this (word-level) featurizer knows: the
   * highest share any word-level featurizer of the pipeline saw.
   */
  private noteKnownShare(message: NluMessage, known: number): void {
    // Token rows hold unigrams only when min_ngram is 1.
    if (this.config.analyzer !== 'word' || this.config.min_ngram !== 1) return;
    let n = message.tokens.length;
    if (this.stopWords.size > 0) {
      // Stop words have no column by design: they are neither known nor unknown.
      for (const t of message.tokens) if (this.stopWords.has(this.processToken(t.text))) n -= 1;
      if (n === 0 && message.tokens.length > 0) return;
    }
    const share = n === 0 ? 0 : Math.min(1, known / n);
    const before = message.knownTokenShare;
    message.knownTokenShare = before === undefined ? share : Math.max(before, share);
  }

  /** Tokens whose own grams have a vocabulary column (an OOV_token stand-in does not count). */
  private knownTokens(tokens: readonly string[]): number {
    let known = 0;
    for (const t of tokens) if (this.vectorize(t).idx.length > 0) known += 1;
    return known;
  }

  process(message: NluMessage, training = false): void {
    if (message.tokens.length === 0) {
      this.noteKnownShare(message, 0);
      message.features.push({
        featurizer: this.name,
        dim: this.vocabulary.length,
        seq: [],
        sentence: null,
      });
      return;
    }
    const summed = !(
      (this.config.analyzer === 'word' && this.config.max_ngram > 1) ||
      this.config.analyzer === 'char'
    );
    if (summed && !training && (this.config.analyzer !== 'word' || !this.config.OOV_token)) {
      // Each row depends on its token's text alone: one lookup per token, by the raw text.
      const raw = message.tokens;
      const seq: SparseVector[] = [];
      let known = 0;
      for (let i = 0; i < raw.length; i++) {
        const text = raw[i]!.text;
        let row = this.rawCache.get(text);
        if (!row) {
          row = this.vectorize(this.processToken(text));
          if (this.rawCache.size < 50000) this.rawCache.set(text, row);
        }
        if (row.idx.length > 0) known += 1;
        seq.push(row);
      }
      this.noteKnownShare(message, known);
      message.features.push(new SummedRowsBlock(this.name, this.vocabulary.length, seq));
      return;
    }
    const tokens = this.tokensOf(message, training);
    const seq = tokens.map((t) => this.vectorize(t));
    if (this.config.analyzer === 'word') {
      const own = this.config.OOV_token
        ? this.knownTokens(message.tokens.map((t) => this.processToken(t.text)))
        : seq.filter((row) => row.idx.length > 0).length;
      this.noteKnownShare(message, own);
    }
    if (!summed) {
      const sentence = this.vectorize(tokens.join(' '));
      message.features.push({ featurizer: this.name, dim: this.vocabulary.length, seq, sentence });
      return;
    }
    message.features.push(new SummedRowsBlock(this.name, this.vocabulary.length, seq));
  }

  toJSON(): unknown {
    return { vocabulary: this.vocabulary };
  }
}
