import { existsSync, readFileSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseVoiceConnectorConfig, VoiceConfigError, type VoiceConnectorConfig } from 'src/core';
import { readNluYaml } from 'src/core/training-data';
import { VOICE_CONNECTOR_KEY } from 'src/modules/channels';
import { parse as parseYaml } from 'yaml';

/** The connector key in credentials.yml (Rasa's `genesys` channel); also the URL segment. */
export const GENESYS_PROVIDER = VOICE_CONNECTOR_KEY;

export interface VoiceGatewayConfig extends VoiceConnectorConfig {
  /** Phrases for the offline recogniser's grammar (NLU examples of `asr.training_data`). */
  readonly phrases: readonly string[];
  /** `DEEPGRAM_API_KEY` from the environment (deepgram engine). */
  readonly deepgramApiKey: string | null;
  /** `AZURE_SPEECH_KEY` / `AZURE_SPEECH_REGION` from the environment (azure engines). */
  readonly azureSpeechKey: string | null;
  readonly azureSpeechRegion: string | null;
  /** `CARTESIA_API_KEY` from the environment (cartesia engine). */
  readonly cartesiaApiKey: string | null;
}

/** API keys of the cloud speech engines, from the environment. */
export interface SpeechKeys {
  readonly deepgram: string | null;
  readonly azureKey?: string | null;
  readonly azureRegion?: string | null;
  readonly cartesia?: string | null;
}

/** A cloud engine named in `asr.name` / `tts.name` needs its key (and Azure a region). */
function checkEngineKeys(config: VoiceConnectorConfig, keys: SpeechKeys, provider: string): void {
  for (const [kind, engine] of [
    ['asr', config.asr],
    ['tts', config.tts],
  ] as const) {
    const key = `${provider}.${kind}.name`;
    if (engine.name === 'deepgram' && keys.deepgram === null) {
      throw new VoiceConfigError(key, 'deepgram needs DEEPGRAM_API_KEY in the environment');
    }
    if (engine.name === 'cartesia' && (keys.cartesia ?? null) === null) {
      throw new VoiceConfigError(key, 'cartesia needs CARTESIA_API_KEY in the environment');
    }
    if (engine.name === 'azure') {
      if ((keys.azureKey ?? null) === null) {
        throw new VoiceConfigError(
          key,
          'azure needs AZURE_SPEECH_API_KEY (or AZURE_SPEECH_KEY) in the environment',
        );
      }
      const hasRegion =
        (keys.azureRegion ?? null) !== null ||
        typeof engine.options.region === 'string' ||
        typeof engine.options.endpoint === 'string';
      if (!hasRegion) {
        throw new VoiceConfigError(
          key,
          'azure needs AZURE_SPEECH_REGION in the environment (or a `region` or `endpoint` option)',
        );
      }
    }
  }
}

/**
 * Reads the voice connector entry of credentials.yml. A small reader of its own (isolated in this
 * module) until a shared credentials reader exists. No file or no `genesys` key → null (the
 * connector is off); a present but invalid entry throws a VoiceConfigError naming the key.
 */
export function readVoiceCredentials(
  file: string | null,
  keys: SpeechKeys = { deepgram: null },
  provider = GENESYS_PROVIDER,
): VoiceGatewayConfig | null {
  if (file === null || !existsSync(file)) return null;
  let document: unknown;
  try {
    document = parseYaml(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new VoiceConfigError(file, `not valid YAML (${(error as Error).message.split('\n')[0]})`);
  }
  if (document === null || typeof document !== 'object' || !(provider in document)) return null;
  const config = parseVoiceConnectorConfig(
    (document as Record<string, unknown>)[provider],
    provider,
  );
  checkEngineKeys(config, keys, provider);
  return {
    ...config,
    phrases: readPhrases(config, provider),
    deepgramApiKey: keys.deepgram,
    azureSpeechKey: keys.azureKey ?? null,
    azureSpeechRegion: keys.azureRegion ?? null,
    cartesiaApiKey: keys.cartesia ?? null,
  };
}

function readPhrases(config: VoiceConnectorConfig, provider: string): string[] {
  const key = `${provider}.asr.training_data`;
  const raw = config.asr.options.training_data;
  if (raw === undefined || raw === null) return [];
  const files = typeof raw === 'string' ? [raw] : raw;
  if (!Array.isArray(files) || !files.every((f) => typeof f === 'string')) {
    throw new VoiceConfigError(key, 'must be a path or a list of paths to NLU YAML files');
  }
  const phrases: string[] = [];
  for (const file of files) {
    const path = resolve(file);
    if (!existsSync(path) || !statSync(path).isFile()) {
      throw new VoiceConfigError(key, `file not found: ${file}`);
    }
    try {
      const read = readNluYaml(readFileSync(path, 'utf8'), file);
      phrases.push(...read.data.examples.map((e) => e.text));
    } catch (error) {
      throw new VoiceConfigError(key, (error as Error).message);
    }
  }
  return phrases;
}
