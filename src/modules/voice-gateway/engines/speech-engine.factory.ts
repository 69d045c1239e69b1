import { Inject, Injectable } from '@nestjs/common';
import { type SpeechRecognizer, type SpeechSynthesizer } from 'src/core';
import { type VoiceGatewayConfig } from 'src/modules/voice-gateway/voice-credentials';
import { VOICE_CONFIG } from 'src/modules/voice-gateway/voice-gateway.tokens';
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
  private readonly asrSetup: PocketsphinxSetup;

  constructor(@Inject(VOICE_CONFIG) config: VoiceGatewayConfig) {
    const tts = config.tts;
    this.synthesizer =
      tts.name === 'deepgram' && config.deepgramApiKey !== null
        ? DeepgramTts.fromOptions(config.deepgramApiKey, tts.options)
        : ProcessTts.fromOptions(tts.name === 'flite' ? 'flite' : 'espeak-ng', tts.options);
    const modelDir =
      typeof config.asr.options.model_dir === 'string'
        ? config.asr.options.model_dir
        : DEFAULT_POCKETSPHINX_MODEL_DIR;
    this.asrSetup = pocketsphinxSetup({ modelDir, phrases: config.phrases });
  }

  get recognizerMode(): 'grammar' | 'language-model' {
    return this.asrSetup.mode;
  }

  createRecognizer(): SpeechRecognizer {
    return new PocketsphinxRecognizer(this.asrSetup);
  }

  getSynthesizer(): SpeechSynthesizer {
    return this.synthesizer;
  }
}
