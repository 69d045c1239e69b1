import { DialogueError } from 'src/core/errors/dialogue-error';
import { ParamReader, type NluComponent, type TrainContext } from 'src/core/nlu/component';
import { type NluMessage } from 'src/core/nlu/message';
import { stateRecord } from 'src/core/nlu/sparse';
import { baseIntent } from 'src/core/training-data/nlu-training-data';

export const NLU_FALLBACK_INTENT = 'nlu_fallback';

/** Maps extracted entity values to canonical synonyms (keys lower-cased). */
export class EntitySynonymMapper implements NluComponent {
  static readonly componentName = 'EntitySynonymMapper';
  readonly name = EntitySynonymMapper.componentName;

  constructor(private readonly synonyms: Readonly<Record<string, string>>) {}

  static train(_params: Readonly<Record<string, unknown>>, ctx: TrainContext): EntitySynonymMapper {
    const map: Record<string, string> = {};
    const add = (surface: string, value: string): void => {
      const key = surface.toLowerCase();
      const previous = map[key];
      if (previous !== undefined && previous !== value) {
        ctx.warnings.push(
          `EntitySynonymMapper: '${key}' maps to '${previous}' and '${value}'; using '${value}'`,
        );
      }
      map[key] = value;
    };
    for (const [surface, value] of Object.entries(ctx.data.synonyms)) add(surface, value);
    for (const ex of ctx.data.examples) {
      for (const e of ex.entities) {
        const surface = ex.text.slice(e.start, e.end);
        if (surface !== e.value) add(surface, e.value);
      }
    }
    return new EntitySynonymMapper(map);
  }

  static load(_config: Readonly<Record<string, unknown>>, state: unknown): EntitySynonymMapper {
    const s = stateRecord(state, 'EntitySynonymMapper');
    const synonyms = stateRecord(s['synonyms'] ?? {}, 'EntitySynonymMapper.synonyms');
    const out: Record<string, string> = {};
    for (const [k, v] of Object.entries(synonyms)) if (typeof v === 'string') out[k] = v;
    return new EntitySynonymMapper(out);
  }

  process(message: NluMessage): void {
    for (const e of message.entities) {
      const key = String(e.value).toLowerCase();
      const canonical = Object.prototype.hasOwnProperty.call(this.synonyms, key)
        ? this.synonyms[key]
        : undefined;
      if (canonical !== undefined) {
        e.value = canonical;
        e.processors = [...(e.processors ?? []), this.name];
      }
    }
  }

  toJSON(): unknown {
    return { synonyms: this.synonyms };
  }
}

/** Rasa FallbackClassifier: `nlu_fallback` on low confidence or an ambiguous top two. */
export class FallbackClassifier implements NluComponent {
  static readonly componentName = 'FallbackClassifier';
  readonly name = FallbackClassifier.componentName;

  constructor(
    readonly threshold: number,
    readonly ambiguityThreshold: number,
  ) {}

  static fromConfig(params: Readonly<Record<string, unknown>>): FallbackClassifier {
    const r = new ParamReader(FallbackClassifier.componentName, params);
    const threshold = r.number('threshold', 0.3);
    const ambiguity = r.number('ambiguity_threshold', 0.1);
    if (threshold < 0 || threshold > 1 || ambiguity < 0 || ambiguity > 1) {
      throw new DialogueError(
        'CONFIG.INVALID',
        'FallbackClassifier: thresholds must be within [0, 1]',
      );
    }
    return new FallbackClassifier(threshold, ambiguity);
  }

  /** True when the message's intent prediction should be replaced by `nlu_fallback`. */
  shouldFallback(message: NluMessage): boolean {
    const confidence = message.intent ? message.intent.confidence : 1;
    if (confidence < this.threshold) return true;
    const ranking = message.intentRanking ?? [];
    const [first, second] = ranking;
    if (ranking.length >= 2 && first && second) {
      return (first.confidence ?? 1) - (second.confidence ?? 1) < this.ambiguityThreshold;
    }
    return false;
  }

  process(message: NluMessage): void {
    if (!this.shouldFallback(message)) return;
    const fallback = { name: NLU_FALLBACK_INTENT, confidence: this.threshold };
    message.intent = { ...fallback };
    message.intentRanking = [{ ...fallback }, ...(message.intentRanking ?? [])];
  }

  toJSON(): unknown {
    return null;
  }
}

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
}

/** Rasa KeywordIntentClassifier: an example text found as a whole word in the message. */
export class KeywordIntentClassifier implements NluComponent {
  static readonly componentName = 'KeywordIntentClassifier';
  readonly name = KeywordIntentClassifier.componentName;
  private readonly compiled: Array<[RegExp, string]>;

  constructor(
    private readonly keywords: ReadonlyArray<readonly [string, string]>,
    private readonly caseSensitive: boolean,
  ) {
    const W = String.raw`[\p{L}\p{M}\p{Nd}\p{Pc}]`;
    this.compiled = keywords.map(([k, intent]) => [
      new RegExp(`(?<!${W})${escapeRegex(k)}(?!${W})`, caseSensitive ? 'u' : 'iu'),
      intent,
    ]);
  }

  static train(
    params: Readonly<Record<string, unknown>>,
    ctx: TrainContext,
  ): KeywordIntentClassifier {
    const caseSensitive = new ParamReader(KeywordIntentClassifier.componentName, params).bool(
      'case_sensitive',
      true,
    );
    const map = new Map<string, string>();
    const conflicting = new Set<string>();
    for (const ex of ctx.data.examples) {
      const intent = baseIntent(ex.intent);
      const key = caseSensitive ? ex.text : ex.text.toLowerCase();
      const existing = map.get(key);
      if (existing !== undefined && existing !== intent) {
        conflicting.add(key);
        ctx.warnings.push(
          `KeywordIntentClassifier: keyword '${ex.text}' is an example of '${existing}' and '${intent}'; it is removed`,
        );
      }
      map.set(key, intent);
    }
    for (const k of conflicting) map.delete(k);
    return new KeywordIntentClassifier([...map], caseSensitive);
  }

  static load(_config: Readonly<Record<string, unknown>>, state: unknown): KeywordIntentClassifier {
    const s = stateRecord(state, 'KeywordIntentClassifier');
    const kw = Array.isArray(s['keywords']) ? (s['keywords'] as Array<[string, string]>) : [];
    return new KeywordIntentClassifier(kw, s['caseSensitive'] !== false);
  }

  process(message: NluMessage): void {
    let found: string | null = null;
    for (const [re, intent] of this.compiled) {
      if (re.test(message.text)) {
        found = intent;
        break;
      }
    }
    if (found !== null || message.intent === null) {
      message.intent = { name: found, confidence: found === null ? 0 : 1 };
      message.intentRanking = found === null ? [] : [{ name: found, confidence: 1 }];
    }
  }

  toJSON(): unknown {
    return { keywords: this.keywords, caseSensitive: this.caseSensitive };
  }
}
