import { DialogueError } from 'src/core/errors/dialogue-error';
import { ParamReader, type NluComponent, type TrainContext } from 'src/core/nlu/component';
import { type NluMessage, type SparseVector, type Token } from 'src/core/nlu/message';
import { pyBool, pyIsDigit, pyIsLower, pyIsTitle, pyIsUpper } from 'src/core/nlu/python-string';
import { stateRecord } from 'src/core/nlu/sparse';

export const LEXICAL_SYNTACTIC_DEFAULT_FEATURES: readonly (readonly string[])[] = [
  ['low', 'title', 'upper'],
  ['BOS', 'EOS', 'low', 'upper', 'title', 'digit'],
  ['low', 'title', 'upper'],
];

type FeatureFn = (token: Token, index: number, count: number) => string;

const FUNCTIONS: Record<string, FeatureFn> = {
  low: (t) => pyBool(pyIsLower(t.text)),
  title: (t) => pyBool(pyIsTitle(t.text)),
  upper: (t) => pyBool(pyIsUpper(t.text)),
  digit: (t) => pyBool(pyIsDigit(t.text)),
  BOS: (_t, i) => pyBool(i === 0),
  EOS: (_t, i, n) => pyBool(i === n - 1),
  prefix5: (t) => [...t.text].slice(0, 5).join(''),
  prefix2: (t) => [...t.text].slice(0, 2).join(''),
  suffix5: (t) => [...t.text].slice(-5).join(''),
  suffix3: (t) => [...t.text].slice(-3).join(''),
  suffix2: (t) => [...t.text].slice(-2).join(''),
  suffix1: (t) => [...t.text].slice(-1).join(''),
};

/** Window positions of Rasa's featurizer: `range(-n//2, n//2 + n%2)` with n = #rows. */
export function windowPositions(n: number): number[] {
  const half = Math.floor(n / 2);
  const out: number[] = [];
  for (let p = -half; p < half + (n % 2); p++) out.push(p + 0);
  return out;
}

/** One-hot lexical window features (Rasa LexicalSyntacticFeaturizer, sequence only). */
export class LexicalSyntacticFeaturizer implements NluComponent {
  static readonly componentName = 'LexicalSyntacticFeaturizer';
  readonly name = LexicalSyntacticFeaturizer.componentName;
  private readonly positions: number[];
  /** key `${position}|${feature}|${value}` → column. */
  private readonly index: Map<string, number>;

  constructor(
    private readonly features: readonly (readonly string[])[],
    private readonly vocabulary: readonly string[],
  ) {
    this.positions = windowPositions(features.length);
    this.index = new Map(vocabulary.map((k, i) => [k, i]));
  }

  static validateFeatures(raw: unknown): string[][] {
    if (raw === undefined || raw === null) {
      return LEXICAL_SYNTACTIC_DEFAULT_FEATURES.map((r) => [...r]);
    }
    const ok =
      Array.isArray(raw) &&
      raw.every((row) => Array.isArray(row) && row.every((f) => typeof f === 'string'));
    if (!ok) {
      throw new DialogueError(
        'CONFIG.INVALID',
        'LexicalSyntacticFeaturizer: features must be a list of lists of feature names',
      );
    }
    const rows = raw;
    for (const row of rows) {
      for (const f of row) {
        if (!(f in FUNCTIONS)) {
          throw new DialogueError(
            'CONFIG.INVALID',
            `LexicalSyntacticFeaturizer: unsupported feature '${f}' (supported: ${Object.keys(FUNCTIONS).join(', ')}; pos/pos2 need spaCy)`,
          );
        }
      }
    }
    return rows;
  }

  static train(
    params: Readonly<Record<string, unknown>>,
    ctx: TrainContext,
  ): LexicalSyntacticFeaturizer {
    const features = LexicalSyntacticFeaturizer.validateFeatures(
      new ParamReader('x', params).raw('features'),
    );
    const tmp = new LexicalSyntacticFeaturizer(features, []);
    const seen = new Map<string, Set<string>>();
    for (const m of ctx.messages) {
      tmp.rawFeatures(m.tokens).forEach((row) => {
        for (const [key, value] of row) {
          let set = seen.get(key);
          if (!set) seen.set(key, (set = new Set()));
          set.add(value);
        }
      });
    }
    const keys = [...seen.keys()].sort((a, b) => {
      const [pa = '0', fa = ''] = a.split('|');
      const [pb = '0', fb = ''] = b.split('|');
      return Number(pa) - Number(pb) || (fa < fb ? -1 : fa > fb ? 1 : 0);
    });
    const vocabulary: string[] = [];
    for (const key of keys) {
      for (const value of [...(seen.get(key) ?? [])].sort()) vocabulary.push(`${key}|${value}`);
    }
    return new LexicalSyntacticFeaturizer(features, vocabulary);
  }

  static load(
    config: Readonly<Record<string, unknown>>,
    state: unknown,
  ): LexicalSyntacticFeaturizer {
    const s = stateRecord(state, 'LexicalSyntacticFeaturizer');
    const features = LexicalSyntacticFeaturizer.validateFeatures(
      s['features'] ?? config['features'],
    );
    const vocabulary = Array.isArray(s['vocabulary']) ? (s['vocabulary'] as string[]) : [];
    return new LexicalSyntacticFeaturizer(features, vocabulary);
  }

  /** Per token: list of [`${position}|${feature}`, value]. */
  private rawFeatures(tokens: readonly Token[]): Array<Array<[string, string]>> {
    const n = tokens.length;
    return tokens.map((_, i) => {
      const out: Array<[string, string]> = [];
      this.positions.forEach((pos, row) => {
        const j = i + pos;
        const token = tokens[j];
        if (!token) return;
        for (const f of this.features[row] ?? []) {
          const fn = FUNCTIONS[f];
          if (fn) out.push([`${pos}|${f}`, fn(token, j, n)]);
        }
      });
      return out;
    });
  }

  process(message: NluMessage): void {
    const seq: SparseVector[] = this.rawFeatures(message.tokens).map((row) => {
      const idx: number[] = [];
      for (const [key, value] of row) {
        const col = this.index.get(`${key}|${value}`);
        if (col !== undefined) idx.push(col);
      }
      idx.sort((a, b) => a - b);
      return { idx, val: idx.map(() => 1) };
    });
    message.features.push({
      featurizer: this.name,
      dim: this.vocabulary.length,
      seq,
      sentence: null,
    });
  }

  toJSON(): unknown {
    return { features: this.features, vocabulary: this.vocabulary };
  }
}
