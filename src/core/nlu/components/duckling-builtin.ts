import * as Recognizers from '@microsoft/recognizers-text-suite';

/**
 * Duckling's dimensions without a Duckling server: Microsoft's Recognizers-Text finds the
 * numbers, times, amounts, ... and each result is reshaped into what Duckling's `/parse` answers
 * (its dimension names and value objects), so an assistant written against Duckling reads the
 * same entities offline.
 */

/** The Duckling dimensions the built-in extractor answers. */
export const BUILTIN_DIMENSIONS: readonly string[] = [
  'number',
  'ordinal',
  'amount-of-money',
  'time',
  'duration',
  'distance',
  'temperature',
  'email',
  'phone-number',
  'url',
];

/** One result as Duckling's `/parse` answers it (offsets in UTF-16 code units here). */
export interface DucklingMatch {
  readonly dim: string;
  readonly start: number;
  readonly end: number;
  readonly body: string;
  readonly value: Record<string, unknown>;
}

/** At most this many characters of a message are read (the recognizers slow down on long text). */
export const MAX_BUILTIN_CHARS = 600;
/** The text is read in windows of at most this many characters, cut at whitespace. */
export const BUILTIN_WINDOW_CHARS = 80;
/** A window with more numbers than this is read for numbers, ordinals and sequences only. */
export const MAX_NUMBERS_PER_WINDOW = 6;

const CULTURES: Readonly<Record<string, string>> = {
  en: 'en-us',
  zh: 'zh-cn',
  es: 'es-es',
  pt: 'pt-br',
  fr: 'fr-fr',
  de: 'de-de',
  ja: 'ja-jp',
  nl: 'nl-nl',
  it: 'it-it',
};

/** The recognizers' culture for a Duckling locale (`en_US`) or a language (`en`); null if none. */
export function recognizerCulture(locale: string | null, language: string): string | null {
  const lang = (locale ?? language).split(/[-_]/)[0]?.toLowerCase() ?? '';
  return CULTURES[lang] ?? null;
}

type RecognizerResult = ReturnType<typeof Recognizers.recognizeNumber>[number];

interface Span {
  readonly start: number;
  readonly end: number;
}

const DISTANCE_UNITS: Readonly<Record<string, string>> = {
  Kilometer: 'kilometre',
  Meter: 'metre',
  Centimeter: 'centimetre',
  Millimeter: 'millimetre',
  Mile: 'mile',
  Yard: 'yard',
  Foot: 'foot',
  Inch: 'inch',
};

const TEMPERATURE_UNITS: Readonly<Record<string, string>> = {
  C: 'celsius',
  F: 'fahrenheit',
  K: 'kelvin',
  Degree: 'degree',
};

const DURATION_UNITS: ReadonlyArray<readonly [string, string, number]> = [
  // [timex letter (date part / time part), Duckling unit, seconds]
  ['Y', 'year', 31536000],
  ['MO', 'month', 2592000],
  ['W', 'week', 604800],
  ['D', 'day', 86400],
  ['H', 'hour', 3600],
  ['MI', 'minute', 60],
  ['S', 'second', 1],
];

/** Splits `[0, limit)` of the text into windows of at most `size` characters, cut at whitespace. */
export function windows(text: string, limit: number, size: number): Span[] {
  let end = Math.min(text.length, limit);
  // A text cut at the limit ends at a whitespace: "1234" is not read as "12".
  if (end < text.length && !/\s/.test(text[end] ?? '')) {
    const cut = Math.max(text.lastIndexOf(' ', end), text.lastIndexOf('\n', end));
    if (cut > 0) end = cut;
  }
  const out: Span[] = [];
  let start = 0;
  while (start < end) {
    while (start < end && /\s/.test(text[start] ?? '')) start++;
    if (start >= end) break;
    let stop = Math.min(end, start + size);
    if (stop < end) {
      const cut = text.lastIndexOf(' ', stop);
      if (cut > start + size / 2) stop = cut;
    }
    // Never split a surrogate pair.
    const last = text.charCodeAt(stop - 1);
    if (stop < text.length && last >= 0xd800 && last <= 0xdbff) stop--;
    if (stop <= start) stop = Math.min(end, start + size);
    out.push({ start, end: stop });
    start = stop;
  }
  return out;
}

/** Wall-clock fields of an instant in a time zone. */
interface WallClock {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (f === undefined) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    });
    formatters.set(timeZone, f);
  }
  return f;
}

/** True when `timeZone` is an IANA zone this runtime knows. */
export function isTimeZone(timeZone: string): boolean {
  try {
    formatter(timeZone);
    return true;
  } catch {
    return false;
  }
}

function wallClock(instant: number, timeZone: string): WallClock {
  const parts: Record<string, number> = {};
  for (const p of formatter(timeZone).formatToParts(new Date(instant))) {
    if (p.type !== 'literal') parts[p.type] = Number(p.value);
  }
  return {
    year: parts['year'] ?? 1970,
    month: parts['month'] ?? 1,
    day: parts['day'] ?? 1,
    hour: parts['hour'] ?? 0,
    minute: parts['minute'] ?? 0,
    second: parts['second'] ?? 0,
  };
}

function wallAsUtc(w: WallClock): number {
  return Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute, w.second);
}

/** Offset of the zone at an instant, in minutes east of UTC. */
function offsetMinutes(instant: number, timeZone: string): number {
  return Math.round(
    (wallAsUtc(wallClock(instant, timeZone)) - Math.floor(instant / 1000) * 1000) / 60000,
  );
}

/** The instant a wall-clock time names in the zone (the earlier one across a DST change). */
function instantOf(w: WallClock, timeZone: string): number {
  const guess = wallAsUtc(w);
  const first = guess - offsetMinutes(guess, timeZone) * 60000;
  return guess - offsetMinutes(first, timeZone) * 60000;
}

const pad = (n: number, width = 2): string => String(Math.abs(n)).padStart(width, '0');

/** Duckling's time format: `2026-11-30T17:00:00.000+01:00`. */
function ducklingTime(w: WallClock, timeZone: string): string {
  const offset = offsetMinutes(instantOf(w, timeZone), timeZone);
  const sign = offset < 0 ? '-' : '+';
  return (
    `${pad(w.year, 4)}-${pad(w.month)}-${pad(w.day)}T${pad(w.hour)}:${pad(w.minute)}:${pad(w.second)}.000` +
    `${sign}${pad(Math.floor(Math.abs(offset) / 60))}:${pad(Math.abs(offset) % 60)}`
  );
}

/** `2026-11-30 17:00:00`, `2026-11-30` or `17:00:00` into wall-clock fields (date defaulting to `ref`). */
function readWall(text: string, ref: WallClock): WallClock | null {
  const m = /^(?:(\d{4})-(\d{2})-(\d{2}))?[ T]?(?:(\d{2}):(\d{2})(?::(\d{2}))?)?$/.exec(
    text.trim(),
  );
  if (!m || (m[1] === undefined && m[4] === undefined)) return null;
  return {
    year: m[1] === undefined ? ref.year : Number(m[1]),
    month: m[2] === undefined ? ref.month : Number(m[2]),
    day: m[3] === undefined ? ref.day : Number(m[3]),
    hour: m[4] === undefined ? 0 : Number(m[4]),
    minute: m[5] === undefined ? 0 : Number(m[5]),
    second: m[6] === undefined ? 0 : Number(m[6]),
  };
}

function addDays(w: WallClock, days: number): WallClock {
  const d = new Date(Date.UTC(w.year, w.month - 1, w.day + days));
  return { ...w, year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate() };
}

/** Duckling's grain of a TIMEX expression. */
function grainOf(timex: string): string {
  if (timex === 'PRESENT_REF') return 'second';
  const time = /T(\d{2})(?::(\d{2}))?(?::(\d{2}))?$/.exec(timex);
  if (time) return time[3] !== undefined ? 'second' : time[2] !== undefined ? 'minute' : 'hour';
  if (/W\d{2}$/.test(timex) && !/WXX/.test(timex)) return 'week';
  if (/^\d{4}$/.test(timex)) return 'year';
  if (/^(\d{4}|XXXX)-\d{2}$/.test(timex)) return 'month';
  if (/T(MO|AF|EV|NI|DT)$/.test(timex)) return 'hour';
  return 'day';
}

interface TimeValue {
  readonly value: string;
  readonly grain: string;
  readonly instant: number;
}

export interface BuiltinOptions {
  readonly culture: string;
  readonly timeZone: string;
  /** Reference time in ms since the epoch ("tomorrow" is relative to it). */
  readonly referenceTime: number;
  readonly dimensions: ReadonlySet<string>;
}

/** Reads the Duckling dimensions of `text` (its first MAX_BUILTIN_CHARS characters). */
export function builtinDuckling(text: string, options: BuiltinOptions): DucklingMatch[] {
  const found: DucklingMatch[] = [];
  for (const w of windows(text, MAX_BUILTIN_CHARS, BUILTIN_WINDOW_CHARS)) {
    const window = text.slice(w.start, w.end);
    for (const m of recognizeWindow(window, options)) {
      found.push({ ...m, start: m.start + w.start, end: m.end + w.start });
    }
  }
  return dropCovered(found);
}

/**
 * Duckling answers the widest reading: a result lying strictly inside another's span (the
 * number in "$20", the hour in "tomorrow at 5pm") is dropped, as are repeats.
 */
function dropCovered(matches: readonly DucklingMatch[]): DucklingMatch[] {
  const kept = matches.filter((m, i) => {
    const covered = matches.some(
      (o) => o.start <= m.start && o.end >= m.end && o.end - o.start > m.end - m.start,
    );
    const repeat = matches.some(
      (o, j) => j < i && o.start === m.start && o.end === m.end && o.dim === m.dim,
    );
    return !covered && !repeat;
  });
  return kept.sort((a, b) => a.start - b.start || a.end - b.end);
}

function recognizeWindow(text: string, options: BuiltinOptions): DucklingMatch[] {
  const { culture, dimensions } = options;
  const out: DucklingMatch[] = [];
  const wants = (dim: string): boolean => dimensions.has(dim);
  const push = (r: RecognizerResult, dim: string, value: Record<string, unknown> | null): void => {
    if (value === null) return;
    // The recognizers' `end` is inclusive and their text lower-cased: take the span's own text.
    const start = r.start;
    const end = r.end + 1;
    out.push({ dim, start, end, body: text.slice(start, end), value });
  };
  const num = (v: unknown): number | null => {
    const n = typeof v === 'string' && v.trim() !== '' ? Number(v) : NaN;
    return Number.isFinite(n) ? n : null;
  };
  const res = (r: RecognizerResult): Record<string, unknown> => r.resolution ?? {};

  const numbers = Recognizers.recognizeNumber(text, culture);
  if (wants('number')) {
    for (const r of numbers) {
      const v = num(res(r)['value']);
      push(r, 'number', v === null ? null : { value: v, type: 'value' });
    }
  }
  // The unit and date/time recognizers slow down with every number in the text: a window dense
  // with numbers (a list, or hostile input) is read for numbers, ordinals and sequences only.
  const dense = numbers.length > MAX_NUMBERS_PER_WINDOW;
  if (wants('ordinal')) {
    for (const r of Recognizers.recognizeOrdinal(text, culture)) {
      const v = num(res(r)['value']);
      // "next" and "last" are relative ordinals (0 / -1), not Duckling's.
      push(r, 'ordinal', v === null || v < 1 ? null : { value: v, type: 'value' });
    }
  }
  if (!dense && wants('amount-of-money')) {
    for (const r of Recognizers.recognizeCurrency(text, culture)) {
      const v = num(res(r)['value']);
      const iso = res(r)['isoCurrency'];
      const unit = typeof iso === 'string' ? iso : currencyUnit(res(r)['unit']);
      push(r, 'amount-of-money', v === null ? null : { value: v, type: 'value', unit });
    }
  }
  if (!dense && wants('distance')) {
    for (const r of Recognizers.recognizeDimension(text, culture)) {
      const v = num(res(r)['value']);
      const unit = DISTANCE_UNITS[String(res(r)['unit'])];
      push(r, 'distance', v === null || !unit ? null : { value: v, type: 'value', unit });
    }
  }
  if (!dense && wants('temperature')) {
    for (const r of Recognizers.recognizeTemperature(text, culture)) {
      const v = num(res(r)['value']);
      const unit = TEMPERATURE_UNITS[String(res(r)['unit'])] ?? 'degree';
      push(r, 'temperature', v === null ? null : { value: v, type: 'value', unit });
    }
  }
  if (!dense && (wants('time') || wants('duration'))) {
    const ref = new Date(options.referenceTime);
    const wall = wallClock(options.referenceTime, options.timeZone);
    // The recognizers read the reference date's local fields: give them the zone's wall clock.
    const localRef = new Date(
      wall.year,
      wall.month - 1,
      wall.day,
      wall.hour,
      wall.minute,
      wall.second,
    );
    for (const r of Recognizers.recognizeDateTime(text, culture, undefined, localRef)) {
      const values = (res(r)['values'] ?? []) as Array<Record<string, unknown>>;
      const kind = r.typeName.replace(/^datetimeV2\./, '');
      if (kind === 'duration') {
        if (wants('duration')) push(r, 'duration', durationValue(values[0]));
      } else if (wants('time')) {
        push(r, 'time', timeValue(kind, values, wall, ref.getTime(), options.timeZone));
      }
    }
  }
  if (wants('email')) {
    for (const r of Recognizers.recognizeEmail(text, culture)) {
      push(r, 'email', { value: text.slice(r.start, r.end + 1) });
    }
  }
  if (wants('phone-number')) {
    for (const r of Recognizers.recognizePhoneNumber(text, culture)) {
      const body = text.slice(r.start, r.end + 1);
      const digits = body.replace(/\D/g, '');
      push(r, 'phone-number', { value: body.trim().startsWith('+') ? `+${digits}` : digits });
    }
  }
  if (wants('url')) {
    for (const r of Recognizers.recognizeURL(text, culture)) {
      const value = text.slice(r.start, r.end + 1);
      const domain = /^(?:[a-z][a-z0-9+.-]*:\/\/)?([^/:?#]+)/i.exec(value)?.[1] ?? value;
      push(r, 'url', { value, domain: domain.toLowerCase() });
    }
  }
  return out;
}

function currencyUnit(unit: unknown): string {
  switch (unit) {
    case 'Dollar':
      return '$';
    case 'Pound':
      return '£';
    case 'Cent':
      return 'cent';
    default:
      return typeof unit === 'string' ? unit : 'unknown';
  }
}

/** `PT2H30M` → Duckling's duration: the value in its smallest unit, and in seconds. */
function durationValue(v: Record<string, unknown> | undefined): Record<string, unknown> | null {
  const timex = typeof v?.['timex'] === 'string' ? v['timex'] : '';
  const m =
    /^P(?:(\d+(?:\.\d+)?)Y)?(?:(\d+(?:\.\d+)?)M)?(?:(\d+(?:\.\d+)?)W)?(?:(\d+(?:\.\d+)?)D)?(?:T(?:(\d+(?:\.\d+)?)H)?(?:(\d+(?:\.\d+)?)M)?(?:(\d+(?:\.\d+)?)S)?)?$/.exec(
      timex,
    );
  if (!m || timex === 'P' || timex === 'PT') return null;
  let seconds = 0;
  let unit: string | null = null;
  let perUnit = 1;
  let count = 0;
  let single = 0;
  for (let i = 0; i < DURATION_UNITS.length; i++) {
    const raw = m[i + 1];
    const u = DURATION_UNITS[i];
    if (raw === undefined || u === undefined) continue;
    const n = Number(raw);
    seconds += n * u[2];
    unit = u[1];
    perUnit = u[2];
    single = n;
    count++;
  }
  if (unit === null) return null;
  const value = count === 1 ? single : seconds / perUnit;
  return {
    value,
    type: 'value',
    unit,
    [unit]: value,
    normalized: { value: seconds, unit: 'second' },
  };
}

/** Time values of a date/time result: Duckling's next occurrence, or an interval as from/to. */
function timeValue(
  kind: string,
  values: ReadonlyArray<Record<string, unknown>>,
  ref: WallClock,
  refInstant: number,
  timeZone: string,
): Record<string, unknown> | null {
  if (kind === 'set') return null;
  const candidates: Array<{ from: TimeValue; to: TimeValue | null }> = [];
  for (const v of values) {
    const timex = typeof v['timex'] === 'string' ? v['timex'] : '';
    const grain = grainOf(timex.replace(/^\(|\)$/g, '').split(',')[0] ?? timex);
    /** A time on or after `after` when it is a bare time of day ("at 5pm": its next occurrence). */
    const at = (text: unknown, after: number): TimeValue | null => {
      if (typeof text !== 'string') return null;
      let w = readWall(text, ref);
      if (w === null) return null;
      if (/^\d{2}:\d{2}/.test(text.trim()) && instantOf(w, timeZone) < after) w = addDays(w, 1);
      return { value: ducklingTime(w, timeZone), grain, instant: instantOf(w, timeZone) };
    };
    const isRange = kind.endsWith('range') && timex.startsWith('(');
    if (isRange || (kind.endsWith('range') && /T(MO|AF|EV|NI|DT)$/.test(timex))) {
      const from = at(v['start'], refInstant - 1000);
      // A range of times of day ends after it starts ("from 10pm to 2am" ends the next day).
      const to = from === null ? null : at(v['end'], from.instant);
      if (from) candidates.push({ from, to });
    } else {
      const from = at(v['value'] ?? v['start'], refInstant - 1000);
      if (from) candidates.push({ from, to: null });
    }
  }
  if (candidates.length === 0) return null;
  // Of ambiguous readings ("monday": last or next), Duckling takes the coming one.
  const future = candidates.filter((c) => c.from.instant >= refInstant - 1000);
  const chosen = (future.length > 0 ? future[0] : candidates[candidates.length - 1]) as {
    from: TimeValue;
    to: TimeValue | null;
  };
  if (chosen.to === null) {
    const one = { value: chosen.from.value, grain: chosen.from.grain, type: 'value' };
    return { ...one, values: [one] };
  }
  const from = { value: chosen.from.value, grain: chosen.from.grain };
  const to = { value: chosen.to.value, grain: chosen.to.grain };
  return { type: 'interval', from, to, values: [{ type: 'interval', from, to }] };
}
