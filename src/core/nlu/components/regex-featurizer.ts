import { ParamReader, type NluComponent, type TrainContext } from 'src/core/nlu/component';
import { type NluMessage, type SparseVector } from 'src/core/nlu/message';
import {
  compileLookupPattern,
  compilePythonRegex,
  lookupTablePattern,
  matchSpans,
} from 'src/core/nlu/python-regex';
import { stateRecord } from 'src/core/nlu/sparse';
import { type NluTrainingData } from 'src/core/training-data/nlu-training-data';

/** A named pattern; `lookup` patterns are already JS syntax, `regex` ones are Python. */
export interface NamedPattern {
  readonly name: string;
  readonly pattern: string;
  readonly kind: 'regex' | 'lookup';
}

/** Rasa pattern_utils: regexes in file order, then one alternation per lookup table. */
export function collectPatterns(
  data: NluTrainingData,
  useRegexes: boolean,
  useLookupTables: boolean,
  useWordBoundaries: boolean,
): NamedPattern[] {
  const out: NamedPattern[] = [];
  if (useRegexes) {
    for (const r of data.regexFeatures) {
      out.push({ name: r.name, pattern: r.pattern, kind: 'regex' });
    }
  }
  if (useLookupTables) {
    for (const t of data.lookupTables) {
      if (t.elements.length === 0) continue;
      out.push({
        name: t.name,
        pattern: lookupTablePattern(t.elements, useWordBoundaries),
        kind: 'lookup',
      });
    }
  }
  return out;
}

export function compilePattern(p: NamedPattern, caseSensitive: boolean): RegExp {
  return p.kind === 'lookup'
    ? compileLookupPattern(p.pattern, caseSensitive)
    : compilePythonRegex(p.pattern, caseSensitive);
}

function readPatterns(value: unknown): NamedPattern[] {
  if (!Array.isArray(value)) return [];
  return value.filter(
    (p): p is NamedPattern =>
      typeof p === 'object' &&
      p !== null &&
      typeof (p as NamedPattern).name === 'string' &&
      typeof (p as NamedPattern).pattern === 'string',
  );
}

/** Token/sentence flags for every regex and lookup table that matched (RegexFeaturizer). */
export class RegexFeaturizer implements NluComponent {
  static readonly componentName = 'RegexFeaturizer';
  readonly name = RegexFeaturizer.componentName;
  private readonly compiled: RegExp[];

  constructor(
    private readonly patterns: readonly NamedPattern[],
    private readonly caseSensitive: boolean,
  ) {
    this.compiled = patterns.map((p) => compilePattern(p, caseSensitive));
  }

  static train(params: Readonly<Record<string, unknown>>, ctx: TrainContext): RegexFeaturizer {
    const r = new ParamReader(RegexFeaturizer.componentName, params);
    const patterns = collectPatterns(
      ctx.data,
      r.bool('use_regexes', true),
      r.bool('use_lookup_tables', true),
      r.bool('use_word_boundaries', true),
    );
    return new RegexFeaturizer(patterns, r.bool('case_sensitive', true));
  }

  static load(_config: Readonly<Record<string, unknown>>, state: unknown): RegexFeaturizer {
    const s = stateRecord(state, 'RegexFeaturizer');
    return new RegexFeaturizer(readPatterns(s['patterns']), s['caseSensitive'] !== false);
  }

  process(message: NluMessage): void {
    const dim = this.patterns.length;
    const tokens = message.tokens;
    const seqIdx: number[][] = tokens.map(() => []);
    const sentence: number[] = [];
    while (message.patterns.length < tokens.length) message.patterns.push({});
    this.compiled.forEach((re, p) => {
      const spans = matchSpans(re, message.text);
      const name = this.patterns[p]?.name ?? '';
      let any = false;
      tokens.forEach((t, i) => {
        const hit = spans.some(([s, e]) => t.start < e && t.end > s);
        const flags = message.patterns[i];
        if (flags) flags[name] = (flags[name] ?? false) || hit;
        if (hit) {
          seqIdx[i]?.push(p);
          any = true;
        }
      });
      if (any) sentence.push(p);
    });
    if (dim === 0) return;
    const seq: SparseVector[] = seqIdx.map((idx) => ({ idx, val: idx.map(() => 1) }));
    message.features.push({
      featurizer: this.name,
      dim,
      seq,
      sentence: { idx: sentence, val: sentence.map(() => 1) },
    });
  }

  toJSON(): unknown {
    return { patterns: this.patterns, caseSensitive: this.caseSensitive };
  }
}

/** Entities straight from regexes/lookups named like a trained entity (RegexEntityExtractor). */
export class RegexEntityExtractor implements NluComponent {
  static readonly componentName = 'RegexEntityExtractor';
  readonly name = RegexEntityExtractor.componentName;
  private readonly compiled: RegExp[];

  constructor(
    private readonly patterns: readonly NamedPattern[],
    private readonly caseSensitive: boolean,
  ) {
    this.compiled = patterns.map((p) => compilePattern(p, caseSensitive));
  }

  static train(params: Readonly<Record<string, unknown>>, ctx: TrainContext): RegexEntityExtractor {
    const r = new ParamReader(RegexEntityExtractor.componentName, params);
    const entityTypes = new Set(ctx.data.examples.flatMap((e) => e.entities.map((x) => x.entity)));
    const patterns = collectPatterns(
      ctx.data,
      r.bool('use_regexes', true),
      r.bool('use_lookup_tables', true),
      r.bool('use_word_boundaries', true),
    ).filter((p) => entityTypes.has(p.name));
    if (patterns.length === 0) {
      ctx.warnings.push(
        'RegexEntityExtractor: no regex or lookup table is named like an annotated entity; it will extract nothing',
      );
    }
    return new RegexEntityExtractor(patterns, r.bool('case_sensitive', false));
  }

  static load(_config: Readonly<Record<string, unknown>>, state: unknown): RegexEntityExtractor {
    const s = stateRecord(state, 'RegexEntityExtractor');
    return new RegexEntityExtractor(readPatterns(s['patterns']), s['caseSensitive'] === true);
  }

  process(message: NluMessage): void {
    this.compiled.forEach((re, p) => {
      const name = this.patterns[p]?.name ?? '';
      for (const [start, end] of matchSpans(re, message.text)) {
        message.entities.push({
          entity: name,
          start,
          end,
          value: message.text.slice(start, end),
          extractor: this.name,
        });
      }
    });
  }

  toJSON(): unknown {
    return { patterns: this.patterns, caseSensitive: this.caseSensitive };
  }
}
