import nlp from 'compromise';
import { ParamReader, type NluComponent, type TrainContext } from 'src/core/nlu/component';
import { type NluMessage } from 'src/core/nlu/message';

const NAME = 'SpacyEntityExtractor';

/** The spaCy labels the substitute answers, with compromise's matcher for each. */
const LABELS = [
  ['PERSON', 'people'],
  ['GPE', 'places'],
  ['ORG', 'organizations'],
] as const;

/** At most this many characters of a message are read. */
export const MAX_SPACY_CHARS = 1000;

interface CompromiseMatch {
  readonly text?: string;
  readonly offset?: { readonly start?: number; readonly length?: number };
}

/**
 * Rasa's SpacyEntityExtractor without spaCy: the `compromise` library finds people (PERSON),
 * places (GPE) and organisations (ORG) in English text, answered with spaCy's label names and
 * Rasa's entity shape (`confidence: null`). `dimensions` keeps only the labels listed. It is a
 * rule-based substitute for spaCy's statistical models: it finds fewer names, and only English.
 */
export class SpacyEntityExtractor implements NluComponent {
  static readonly componentName = NAME;
  readonly name = NAME;
  readonly notice: string;

  constructor(
    readonly dimensions: readonly string[] | null,
    private readonly language: string,
  ) {
    this.notice =
      `${NAME}: spaCy is not available; Parley's built-in substitute (rule-based, English) ` +
      `answers PERSON, GPE and ORG in the first ${MAX_SPACY_CHARS} characters of a message`;
  }

  private static fromParams(
    params: Readonly<Record<string, unknown>>,
    language: string,
  ): SpacyEntityExtractor {
    const r = new ParamReader(NAME, params);
    const dims = r.raw('dimensions');
    return new SpacyEntityExtractor(
      dims === undefined || dims === null ? null : r.stringList('dimensions', []),
      language,
    );
  }

  static train(params: Readonly<Record<string, unknown>>, ctx: TrainContext): SpacyEntityExtractor {
    const language = ctx.language ?? 'en';
    const component = SpacyEntityExtractor.fromParams(params, language);
    ctx.warnings.push(component.notice);
    if (!language.toLowerCase().startsWith('en')) {
      ctx.warnings.push(
        `${NAME}: the built-in substitute reads English only (language '${language}')`,
      );
    }
    const known: readonly string[] = LABELS.map(([label]) => label);
    const unknown = (component.dimensions ?? []).filter((d) => !known.includes(d));
    if (unknown.length > 0) {
      ctx.warnings.push(
        `${NAME}: the built-in substitute does not answer ${unknown.map((d) => `'${d}'`).join(', ')}`,
      );
    }
    return component;
  }

  static load(params: Readonly<Record<string, unknown>>, state: unknown): SpacyEntityExtractor {
    const language =
      typeof state === 'object' &&
      state !== null &&
      typeof (state as Record<string, unknown>)['language'] === 'string'
        ? ((state as Record<string, unknown>)['language'] as string)
        : 'en';
    return SpacyEntityExtractor.fromParams(params, language);
  }

  process(message: NluMessage): void {
    const wanted =
      this.dimensions === null || this.dimensions.length === 0 ? null : this.dimensions;
    const labels = LABELS.filter(([label]) => wanted === null || wanted.includes(label));
    if (labels.length === 0 || message.text.trim() === '') return;
    const text = message.text.slice(0, MAX_SPACY_CHARS);
    const doc = nlp(text);
    const found: Array<{ label: string; start: number; end: number }> = [];
    for (const [label, method] of labels) {
      const matches = doc[method]().json({ offset: true }) as CompromiseMatch[];
      for (const m of matches) {
        const start = m.offset?.start;
        const length = m.offset?.length;
        if (typeof start !== 'number' || typeof length !== 'number' || length <= 0) continue;
        // Trailing punctuation is not part of a name.
        let end = Math.min(text.length, start + length);
        while (end > start && /[\s.,;:!?'"()]/.test(text[end - 1] ?? '')) end--;
        if (end > start) found.push({ label, start, end });
      }
    }
    found.sort((a, b) => a.start - b.start || a.end - b.end);
    for (const f of found) {
      message.entities.push({
        entity: f.label,
        value: text.slice(f.start, f.end),
        start: f.start,
        confidence: null,
        end: f.end,
        extractor: NAME,
      });
    }
  }

  toJSON(): unknown {
    return { language: this.language };
  }
}
