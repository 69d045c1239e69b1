import { DialogueError } from 'src/core/errors/dialogue-error';
import {
  ParamReader,
  type NluComponent,
  type ParseContext,
  type TrainContext,
} from 'src/core/nlu/component';
import {
  BUILTIN_DIMENSIONS,
  builtinDuckling,
  isTimeZone,
  MAX_BUILTIN_CHARS,
  recognizerCulture,
  type DucklingMatch,
} from 'src/core/nlu/components/duckling-builtin';
import { type NluMessage, type ParsedEntity } from 'src/core/nlu/message';

const NAME = 'DucklingEntityExtractor';

/** Rasa's DucklingEntityExtractor config. */
export interface DucklingConfig {
  /** Dimensions kept (all when null). */
  readonly dimensions: readonly string[] | null;
  /** The Duckling server; null: the built-in extractor. */
  readonly url: string | null;
  readonly locale: string | null;
  readonly timezone: string | null;
  /** Seconds to wait for the server. */
  readonly timeout: number;
}

export function readDucklingConfig(params: Readonly<Record<string, unknown>>): DucklingConfig {
  const r = new ParamReader(NAME, params);
  const dims = r.raw('dimensions');
  const config: DucklingConfig = {
    dimensions: dims === undefined || dims === null ? null : r.stringList('dimensions', []),
    url: r.optionalString('url'),
    locale: r.optionalString('locale'),
    timezone: r.optionalString('timezone'),
    timeout: r.number('timeout', 3),
  };
  if (config.timeout <= 0) {
    throw new DialogueError('CONFIG.INVALID', `${NAME}: parameter 'timeout' must be above 0`, {
      component: NAME,
      parameter: 'timeout',
    });
  }
  return config;
}

/** Rasa's `concat_url`: one slash between the base and the path. */
function concatUrl(base: string, path: string): string {
  return `${base.endsWith('/') ? base : `${base}/`}${path.replace(/^\//, '')}`;
}

/** Converts code-point offsets (Duckling's, as Python's) to the UTF-16 offsets of the text. */
function utf16Offsets(text: string): (codePoint: number) => number {
  if (!/[\uD800-\uDBFF]/.test(text)) return (i) => i;
  const table: number[] = [];
  for (let i = 0; i < text.length; i++) {
    table.push(i);
    const c = text.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) i++;
  }
  table.push(text.length);
  return (cp) => table[cp] ?? text.length;
}

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Rasa's `extract_value`: an interval's `{to, from}` values (null for an open end), otherwise
 * `value.value`.
 */
export function ducklingValue(value: Record<string, unknown>): unknown {
  if (value['type'] === 'interval') {
    const to = isRecord(value['to']) ? value['to']['value'] : undefined;
    const from = isRecord(value['from']) ? value['from']['value'] : undefined;
    return { to: to ?? null, from: from ?? null };
  }
  return value['value'] ?? null;
}

/** Rasa's `convert_duckling_format_to_rasa`, with the extractor's name, dimensions filtered. */
function toEntities(
  matches: readonly DucklingMatch[],
  dimensions: readonly string[] | null,
): ParsedEntity[] {
  return matches
    .filter((m) => dimensions === null || dimensions.length === 0 || dimensions.includes(m.dim))
    .map((m) => ({
      start: m.start,
      end: m.end,
      text: m.body,
      value: ducklingValue(m.value),
      confidence: 1.0,
      additional_info: m.value,
      entity: m.dim,
      extractor: NAME,
    }));
}

/** Reads a Duckling `/parse` answer; malformed results are skipped. Offsets become UTF-16. */
export function readDucklingAnswer(text: string, answer: unknown): DucklingMatch[] {
  if (!Array.isArray(answer)) return [];
  const toUtf16 = utf16Offsets(text);
  const out: DucklingMatch[] = [];
  for (const m of answer) {
    if (!isRecord(m) || typeof m['dim'] !== 'string' || !isRecord(m['value'])) continue;
    const start = m['start'];
    const end = m['end'];
    if (typeof start !== 'number' || typeof end !== 'number' || start < 0 || end < start) continue;
    const body =
      typeof m['body'] === 'string' ? m['body'] : typeof m['text'] === 'string' ? m['text'] : '';
    out.push({ dim: m['dim'], start: toUtf16(start), end: toUtf16(end), body, value: m['value'] });
  }
  return out;
}

const warmed = new Set<string>();

/** A failed fetch's message with its cause (`fetch failed: connect ECONNREFUSED …`). */
function errorText(e: unknown): string {
  const error = e as { message?: unknown; cause?: { message?: unknown; code?: unknown } };
  const cause = error.cause?.message || error.cause?.code;
  return `${String(error.message)}${typeof cause === 'string' && cause !== '' ? `: ${cause}` : ''}`;
}

/**
 * The recognizers build their models on first use (about half a second): done at training and
 * load, once per culture, rather than in the first message's parse.
 */
function warmUp(culture: string, timeZone: string): void {
  if (warmed.has(culture)) return;
  warmed.add(culture);
  builtinDuckling('at 5pm tomorrow, 3 pizzas for $20, the 2nd, 5 km, 70 degrees, 2 hours', {
    culture,
    timeZone,
    referenceTime: 0,
    dimensions: new Set(BUILTIN_DIMENSIONS),
  });
}

/**
 * Rasa's DucklingEntityExtractor. With `url` it asks that Duckling server, as Rasa does (so a
 * parse with it is asynchronous: `TrainedNlu.parseAsync`); without, a built-in extractor answers
 * Duckling's dimensions and value shapes for number, ordinal, amount-of-money, time, duration,
 * distance, temperature, email, phone-number and url. The built-in extractor also answers when
 * the configured server cannot be reached (refused, unknown host, timed out), so a project
 * copied from Rasa with `url: http://localhost:8000` keeps its numbers and times offline; a
 * server that answers with an error gives no entities, as in Rasa.
 */
export class DucklingEntityExtractor implements NluComponent {
  static readonly componentName = NAME;
  readonly name = NAME;
  /** Said at training and at load: what answers in place of the Duckling server. */
  readonly notice: string | null;
  private readonly culture: string;
  private readonly timeZone: string;
  private readonly builtinDims: ReadonlySet<string>;
  /** The server asked: `RASA_DUCKLING_HTTP_URL` when set (as in Rasa), else `url`. */
  readonly url: string | null;
  readonly processAsync?: (message: NluMessage, context: ParseContext) => Promise<void>;

  constructor(
    readonly config: DucklingConfig,
    private readonly language: string,
    env: Readonly<Record<string, string | undefined>> = process.env,
  ) {
    const fromEnv = env['RASA_DUCKLING_HTTP_URL'];
    this.url = fromEnv !== undefined && fromEnv !== '' ? fromEnv : config.url;
    this.culture = recognizerCulture(config.locale, language) ?? 'en-us';
    this.timeZone =
      config.timezone !== null && isTimeZone(config.timezone) ? config.timezone : 'UTC';
    const wanted =
      config.dimensions === null || config.dimensions.length === 0 ? null : config.dimensions;
    this.builtinDims = new Set(
      BUILTIN_DIMENSIONS.filter((d) => wanted === null || wanted.includes(d)),
    );
    const url = this.url;
    if (url !== null) {
      this.notice = null;
      this.processAsync = (message, context) => this.askServer(url, message, context);
    } else {
      warmUp(this.culture, this.timeZone);
      this.notice =
        `${NAME}: no 'url' configured (nor RASA_DUCKLING_HTTP_URL), so no Duckling server is asked; Parley's built-in extractor ` +
        `answers ${BUILTIN_DIMENSIONS.join(', ')} (the first ${MAX_BUILTIN_CHARS} characters of a message)`;
    }
  }

  static train(
    params: Readonly<Record<string, unknown>>,
    ctx: TrainContext,
  ): DucklingEntityExtractor {
    const component = new DucklingEntityExtractor(readDucklingConfig(params), ctx.language ?? 'en');
    for (const w of component.configWarnings()) ctx.warnings.push(w);
    if (component.notice !== null) ctx.warnings.push(component.notice);
    return component;
  }

  static load(params: Readonly<Record<string, unknown>>, state: unknown): DucklingEntityExtractor {
    const language =
      isRecord(state) && typeof state['language'] === 'string' ? state['language'] : 'en';
    return new DucklingEntityExtractor(readDucklingConfig(params), language);
  }

  /** What the built-in extractor cannot honour. */
  private configWarnings(): string[] {
    if (this.url !== null) return [];
    const out: string[] = [];
    const unknown = (this.config.dimensions ?? []).filter((d) => !BUILTIN_DIMENSIONS.includes(d));
    if (unknown.length > 0) {
      out.push(
        `${NAME}: the built-in extractor does not answer ${unknown.map((d) => `'${d}'`).join(', ')}`,
      );
    }
    if (recognizerCulture(this.config.locale, this.language) === null) {
      out.push(
        `${NAME}: the built-in extractor has no rules for '${this.config.locale ?? this.language}'; English rules are used`,
      );
    }
    if (this.config.timezone !== null && !isTimeZone(this.config.timezone)) {
      out.push(`${NAME}: unknown timezone '${this.config.timezone}'; UTC is used`);
    }
    return out;
  }

  /** The built-in extractor; with a server, nothing here (`processAsync` asks it). */
  process(message: NluMessage): void {
    if (this.url === null) this.builtin(message);
  }

  private builtin(message: NluMessage): void {
    if (this.builtinDims.size === 0 || message.text.trim() === '') return;
    warmUp(this.culture, this.timeZone);
    const matches = builtinDuckling(message.text, {
      culture: this.culture,
      timeZone: this.timeZone,
      referenceTime: message.time ?? Date.now(),
      dimensions: this.builtinDims,
    });
    message.entities.push(...toEntities(matches, this.config.dimensions));
  }

  /** Rasa's `_duckling_parse`: a failure is reported and gives no entities. */
  private async askServer(url: string, message: NluMessage, context: ParseContext): Promise<void> {
    const parseUrl = concatUrl(url, '/parse');
    const form = new URLSearchParams();
    form.set('text', message.text);
    if (this.config.locale !== null) form.set('locale', this.config.locale);
    if (this.config.timezone !== null) form.set('tz', this.config.timezone);
    form.set('dims', JSON.stringify(this.config.dimensions));
    form.set('reftime', String(Math.floor(message.time ?? Date.now())));
    let answer: unknown;
    try {
      const response = await fetch(parseUrl, {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded; charset=UTF-8' },
        body: form.toString(),
        signal: AbortSignal.timeout(this.config.timeout * 1000),
      });
      const body = await response.text();
      if (response.status !== 200) {
        context.onWarning?.(
          `${NAME}: Failed to get a proper response from remote duckling at '${parseUrl}'. ` +
            `Status Code: ${response.status}. Response: ${body.slice(0, 500)}`,
        );
        return;
      }
      answer = JSON.parse(body) as unknown;
    } catch (e) {
      context.onWarning?.(
        `${NAME}: Failed to connect to duckling http server at '${parseUrl}'. Make sure the ` +
          `duckling server is running/healthy/not stale and the proper host and port are set ` +
          `in the configuration. Error: ${errorText(e)}. Parley's built-in extractor answered instead.`,
      );
      this.builtin(message);
      return;
    }
    const matches = readDucklingAnswer(message.text, answer);
    message.entities.push(...toEntities(matches, this.config.dimensions));
  }

  toJSON(): unknown {
    return { language: this.language };
  }
}
