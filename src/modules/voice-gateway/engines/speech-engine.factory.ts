import { Inject, Injectable } from '@nestjs/common';
import { type SpeechRecognizer, type SpeechSynthesizer } from 'src/core';
import { type VoiceGatewayConfig } from 'src/modules/voice-gateway/voice-credentials';
import { VOICE_CONFIG } from 'src/modules/voice-gateway/voice-gateway.tokens';
import { AzureAsr } from './azure-asr';
import { AzureTts } from './azure-tts';
import { CartesiaTts } from './cartesia-tts';
import { DeepgramAsr } from './deepgram-asr';
import { DeepgramTts } from './deepgram-tts';
import {
  DEFAULT_POCKETSPHINX_MODEL_DIR,
  PocketsphinxRecognizer,
  type PocketsphinxSetup,
  pocketsphinxSetup,
} from './pocketsphinx-asr';
import { ProcessTts } from './process-tts';

/**
 * Builds the engines named by `asr.name` / `tts.name`: one recognizer per call, one shared
 * synthesizer (its cache is shared by all calls). Set-up problems surface at start-up.
 */
@Injectable()
export class SpeechEngineFactory {
  private readonly synthesizer: SpeechSynthesizer;
  private readonly asrSetup: PocketsphinxSetup | null = null;

  constructor(@Inject(VOICE_CONFIG) private readonly config: VoiceGatewayConfig) {
    this.synthesizer = SpeechEngineFactory.synthesizerFor(config);
    if (config.asr.name !== 'pocketsphinx') return;
    const modelDir =
      typeof config.asr.options.model_dir === 'string'
        ? config.asr.options.model_dir
        : DEFAULT_POCKETSPHINX_MODEL_DIR;
    this.asrSetup = pocketsphinxSetup({ modelDir, phrases: config.phrases });
  }

  /** Cloud engines get their keys from the environment (checked when credentials are read). */
  private static synthesizerFor(config: VoiceGatewayConfig): SpeechSynthesizer {
    const { name, options } = config.tts;
    if (name === 'deepgram' && config.deepgramApiKey !== null) {
      return DeepgramTts.fromOptions(config.deepgramApiKey, options);
    }
    if (name === 'azure' && config.azureSpeechKey !== null) {
      return AzureTts.fromOptions(config.azureSpeechKey, config.azureSpeechRegion, options);
    }
    if (name === 'cartesia' && config.cartesiaApiKey !== null) {
      return CartesiaTts.fromOptions(config.cartesiaApiKey, options);
    }
    return ProcessTts.fromOptions(name === 'flite' ? 'flite' : 'espeak-ng', options);
  }

  /** The offline recognizer's mode; null with a cloud recognizer. */
  get recognizerMode(): 'grammar' | 'language-model' | null {
    return this.asrSetup?.mode ?? null;
  }

  createRecognizer(): SpeechRecognizer {
    const { name, options } = this.config.asr;
    if (name === 'deepgram' && this.config.deepgramApiKey !== null) {
      return DeepgramAsr.fromOptions(this.config.deepgramApiKey, options);
    }
    if (name === 'azure' && this.config.azureSpeechKey !== null) {
      return AzureAsr.fromOptions(
        this.config.azureSpeechKey,
        this.config.azureSpeechRegion,
        options,
      );
    }
    if (this.asrSetup === null) throw new Error(`no recognizer for asr.name ${name}`);
    return new PocketsphinxRecognizer(this.asrSetup);
  }

  getSynthesizer(): SpeechSynthesizer {
    return this.synthesizer;
  }
}
