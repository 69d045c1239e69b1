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

/** Key of the row stored in a rowCache leaf. */
const ROW = Symbol('row');

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
  /** Distinct feature names; per (window row, feature) slot its position, feature and columns. */
  private readonly names: string[];
  private readonly slots: Array<{ pos: number; name: number; columns: Map<string, number> }>;
  /** Token text → values of the text-only features (BOS/EOS are positional), bounded. */
  private readonly valueCache = new Map<string, string[][]>();
  /** Interned rows: nested maps over the window's value arrays (by identity), bounded. */
  private readonly rowCache = new Map<unknown, unknown>();
  private rowCacheSize = 0;

  constructor(
    private readonly features: readonly (readonly string[])[],
    private readonly vocabulary: readonly string[],
  ) {
    this.positions = windowPositions(features.length);
    this.names = [...new Set(features.flat())];
    this.slots = [];
    const byKey = new Map<string, Map<string, number>>();
    vocabulary.forEach((k, col) => {
      const cut = k.indexOf('|', k.indexOf('|') + 1);
      const key = k.slice(0, cut);
      let m = byKey.get(key);
      if (!m) byKey.set(key, (m = new Map<string, number>()));
      m.set(k.slice(cut + 1), col);
    });
    this.positions.forEach((pos, row) => {
      for (const f of features[row] ?? []) {
        this.slots.push({
          pos,
          name: this.names.indexOf(f),
          columns: byKey.get(`${pos}|${f}`) ?? new Map<string, number>(),
        });
      }
    });
  }

  /**
   * Values of every distinct feature for token i of n. One shared array per token text and
   * BOS/EOS case, so that equal windows can share their feature row (see process).
   */
  private tokenValues(token: Token, i: number, n: number): string[] {
    let variants = this.valueCache.get(token.text);
    if (!variants) {
      variants = [];
      if (this.valueCache.size < 50000) this.valueCache.set(token.text, variants);
    }
    const variant = (i === 0 ? 1 : 0) | (i === n - 1 ? 2 : 0);
    let values = variants[variant];
    if (!values) {
      values = this.names.map((f) =>
        f === 'BOS'
          ? pyBool(i === 0)
          : f === 'EOS'
            ? pyBool(i === n - 1)
            : (FUNCTIONS[f]?.(token, i, n) ?? ''),
      );
      variants[variant] = values;
    }
    return values;
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
    const tokens = message.tokens;
    const n = tokens.length;
    const values = tokens.map((t, i) => this.tokenValues(t, i, n));
    const seq: SparseVector[] = new Array<SparseVector>(n);
    for (let i = 0; i < n; i++) {
      // Rows of equal windows are shared objects (consumers may cache per row).
      let node = this.rowCache;
      for (const pos of this.positions) {
        const key = values[i + pos] ?? null;
        let child = node.get(key) as Map<unknown, unknown> | undefined;
        if (!child) {
          child = new Map<unknown, unknown>();
          if (this.rowCacheSize < 50000) node.set(key, child);
        }
        node = child;
      }
      let row = node.get(ROW) as SparseVector | undefined;
      if (!row) {
        const idx: number[] = [];
        for (const slot of this.slots) {
          const vals = values[i + slot.pos];
          if (!vals) continue;
          const col = slot.columns.get(vals[slot.name] ?? '');
          if (col !== undefined) idx.push(col);
        }
        idx.sort((a, b) => a - b);
        row = { idx, val: idx.map(() => 1) };
        if (this.rowCacheSize < 50000) {
          node.set(ROW, row);
          this.rowCacheSize += 1;
        }
      }
      seq[i] = row;
    }
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
