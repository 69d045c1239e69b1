import { type SpeechGateOptions } from 'src/core/voice/speech-gate';
import {
  DEFAULT_TRANSCRIPT_FILTER,
  type TranscriptFilterOptions,
} from 'src/core/voice/transcript-filter';

/**
 * The voice-stream connector's entry in credentials.yml (Rasa's `genesys` channel keys), validated.
 * Every problem names the key, e.g. `genesys.api_key: required, a non-empty string`.
 */
export interface EngineConfig {
  readonly name: string;
  readonly options: Readonly<Record<string, unknown>>;
}

export interface VoiceConnectorConfig {
  /** Connector key in credentials.yml and URL segment (`genesys`). */
  readonly provider: string;
  readonly apiKey: string;
  readonly serverUrl: string;
  /** Decoded client secret; null → signatures are not verified. */
  readonly clientSecret: Buffer | null;
  readonly asr: EngineConfig;
  readonly tts: EngineConfig;
  readonly interruptions: { readonly enabled: boolean; readonly minWords: number };
  /** Seconds; null = no silence timeout. */
  readonly silenceTimeout: number | null;
  /** Slot names returned to the call flow as `outputVariables`. */
  readonly outputVariables: readonly string[];
  /** `vad`: speech gate tuning (only the keys given). */
  readonly speechGate: Partial<SpeechGateOptions>;
  /** `transcripts`: which recognition results make a turn. */
  readonly transcripts: TranscriptFilterOptions;
  /** `pause_audio_after` (seconds): pause the caller's audio while a turn takes longer; null = off. */
  readonly pauseAudioAfter: number | null;
}

export class VoiceConfigError extends Error {
  constructor(
    readonly key: string,
    problem: string,
  ) {
    super(`${key}: ${problem}`);
    this.name = 'VoiceConfigError';
  }
}

/** Engines this build provides (offline and cloud). */
export const ASR_ENGINES = ['pocketsphinx', 'deepgram', 'azure'] as const;
export const TTS_ENGINES = ['flite', 'espeak-ng', 'deepgram', 'azure', 'cartesia'] as const;
const KNOWN_KEYS = new Set([
  'api_key',
  'server_url',
  'client_secret',
  'asr',
  'tts',
  'interruptions',
  'silence_timeout',
  'output_variables',
  'vad',
  'transcripts',
  'pause_audio_after',
]);

/** `vad` keys → speech gate options (milliseconds and decibels). */
const VAD_KEYS: Readonly<Record<string, keyof SpeechGateOptions>> = {
  pre_roll_ms: 'preRollMs',
  hangover_ms: 'hangoverMs',
  margin_db: 'marginDb',
  min_level_db: 'minLevelDb',
  min_voiced_ms: 'minVoicedMs',
  max_speech_ms: 'maxSpeechMs',
};

function speechGate(raw: unknown, key: string): Partial<SpeechGateOptions> {
  if (raw === undefined || raw === null) return {};
  if (!isObject(raw)) throw new VoiceConfigError(key, 'must be a mapping');
  const out: Partial<Record<keyof SpeechGateOptions, number>> = {};
  for (const [name, value] of Object.entries(raw)) {
    const option = VAD_KEYS[name];
    if (option === undefined) {
      throw new VoiceConfigError(
        `${key}.${name}`,
        `unknown key (one of ${Object.keys(VAD_KEYS).join(', ')})`,
      );
    }
    if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > 60_000) {
      throw new VoiceConfigError(`${key}.${name}`, 'must be a number ≥ 0');
    }
    out[option] = value;
  }
  return out;
}

function transcripts(raw: unknown, key: string): TranscriptFilterOptions {
  if (raw === undefined || raw === null) return DEFAULT_TRANSCRIPT_FILTER;
  if (!isObject(raw)) throw new VoiceConfigError(key, 'must be a mapping');
  for (const name of Object.keys(raw)) {
    if (name !== 'fillers' && name !== 'min_confidence') {
      throw new VoiceConfigError(`${key}.${name}`, 'unknown key (fillers, min_confidence)');
    }
  }
  const { fillers, min_confidence: minConfidence } = raw;
  if (
    fillers !== undefined &&
    (!Array.isArray(fillers) || !fillers.every((f) => typeof f === 'string'))
  ) {
    throw new VoiceConfigError(`${key}.fillers`, 'must be a list of words');
  }
  if (
    minConfidence !== undefined &&
    (typeof minConfidence !== 'number' || !(minConfidence >= 0 && minConfidence <= 1))
  ) {
    throw new VoiceConfigError(`${key}.min_confidence`, 'must be a number from 0 to 1');
  }
  return {
    fillers: fillers ?? DEFAULT_TRANSCRIPT_FILTER.fillers,
    minConfidence: minConfidence ?? DEFAULT_TRANSCRIPT_FILTER.minConfidence,
  };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function engine(raw: unknown, key: string, names: readonly string[]): EngineConfig {
  if (!isObject(raw)) throw new VoiceConfigError(key, 'required, a mapping with a `name`');
  const { name, ...options } = raw;
  if (typeof name !== 'string' || !names.includes(name)) {
    throw new VoiceConfigError(`${key}.name`, `must be one of ${names.join(', ')}`);
  }
  return { name, options };
}

export function parseVoiceConnectorConfig(raw: unknown, provider: string): VoiceConnectorConfig {
  if (!isObject(raw)) throw new VoiceConfigError(provider, 'must be a mapping');
  for (const key of Object.keys(raw)) {
    if (!KNOWN_KEYS.has(key)) throw new VoiceConfigError(`${provider}.${key}`, 'unknown key');
  }
  const apiKey = raw.api_key;
  if (typeof apiKey !== 'string' || apiKey.trim().length === 0) {
    throw new VoiceConfigError(`${provider}.api_key`, 'required, a non-empty string');
  }
  const serverUrl = raw.server_url;
  if (typeof serverUrl !== 'string' || serverUrl.length === 0) {
    throw new VoiceConfigError(`${provider}.server_url`, 'required, the domain without a scheme');
  }
  if (/^[a-z]+:\/\//i.test(serverUrl) || serverUrl.includes('/')) {
    throw new VoiceConfigError(
      `${provider}.server_url`,
      'must be a domain (host[:port]) without scheme or path',
    );
  }
  let clientSecret: Buffer | null = null;
  if (raw.client_secret !== undefined && raw.client_secret !== null) {
    const secret = raw.client_secret;
    if (
      typeof secret !== 'string' ||
      !/^[A-Za-z0-9+/]+={0,2}$/.test(secret) ||
      secret.length % 4 !== 0
    ) {
      throw new VoiceConfigError(`${provider}.client_secret`, 'must be a base-64 string');
    }
    clientSecret = Buffer.from(secret, 'base64');
  }
  const asr = engine(raw.asr, `${provider}.asr`, ASR_ENGINES);
  const tts = engine(raw.tts, `${provider}.tts`, TTS_ENGINES);
  let interruptions = { enabled: false, minWords: 3 };
  if (raw.interruptions !== undefined && raw.interruptions !== null) {
    const i = raw.interruptions;
    if (!isObject(i)) throw new VoiceConfigError(`${provider}.interruptions`, 'must be a mapping');
    if (i.enabled !== undefined && typeof i.enabled !== 'boolean') {
      throw new VoiceConfigError(`${provider}.interruptions.enabled`, 'must be true or false');
    }
    if (
      i.min_words !== undefined &&
      (!Number.isInteger(i.min_words) || (i.min_words as number) < 1)
    ) {
      throw new VoiceConfigError(`${provider}.interruptions.min_words`, 'must be an integer ≥ 1');
    }
    interruptions = {
      enabled: i.enabled === true,
      minWords: typeof i.min_words === 'number' ? i.min_words : 3,
    };
  }
  let silenceTimeout: number | null = null;
  if (raw.silence_timeout !== undefined && raw.silence_timeout !== null) {
    const s = raw.silence_timeout;
    if (typeof s !== 'number' || !Number.isFinite(s) || s <= 0) {
      throw new VoiceConfigError(
        `${provider}.silence_timeout`,
        'must be a positive number of seconds',
      );
    }
    silenceTimeout = s;
  }
  let outputVariables: string[] = [];
  if (raw.output_variables !== undefined && raw.output_variables !== null) {
    const o = raw.output_variables;
    if (!Array.isArray(o) || !o.every((v) => typeof v === 'string')) {
      throw new VoiceConfigError(`${provider}.output_variables`, 'must be a list of slot names');
    }
    outputVariables = o;
  }
  let pauseAudioAfter: number | null = null;
  if (raw.pause_audio_after !== undefined && raw.pause_audio_after !== null) {
    const p = raw.pause_audio_after;
    if (typeof p !== 'number' || !Number.isFinite(p) || p <= 0) {
      throw new VoiceConfigError(
        `${provider}.pause_audio_after`,
        'must be a positive number of seconds',
      );
    }
    pauseAudioAfter = p;
  }
  return {
    provider,
    apiKey,
    serverUrl,
    clientSecret,
    asr,
    tts,
    interruptions,
    silenceTimeout,
    outputVariables,
    speechGate: speechGate(raw.vad, `${provider}.vad`),
    transcripts: transcripts(raw.transcripts, `${provider}.transcripts`),
    pauseAudioAfter,
  };
}
