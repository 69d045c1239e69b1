import { Inject, Injectable } from '@nestjs/common';
import {
  AssistantSource,
  type Domain,
  type SpeechRecognizer,
  type SpeechSynthesizer,
} from 'src/core';
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
  private readonly modelDir: string = DEFAULT_POCKETSPHINX_MODEL_DIR;
  /** The offline grammar of the loaded model (its NLU examples and buttons), by model id. */
  private modelSetup: { modelId: string; setup: PocketsphinxSetup } | null = null;

  constructor(
    @Inject(VOICE_CONFIG) private readonly config: VoiceGatewayConfig,
    private readonly assistants: AssistantSource,
  ) {
    this.synthesizer = SpeechEngineFactory.synthesizerFor(config);
    if (config.asr.name !== 'pocketsphinx') return;
    if (typeof config.asr.options.model_dir === 'string') {
      this.modelDir = config.asr.options.model_dir;
    }
    // Checked at start-up: a missing acoustic model stops Parley with a clear message.
    this.asrSetup = pocketsphinxSetup({ modelDir: this.modelDir, phrases: config.phrases });
  }

  /**
   * The offline recognizer's set-up for a new call: a grammar of the loaded model's NLU examples
   * (stored in the archive at training), its button titles, digits, and the phrases of
   * `asr.training_data`; the full language model when there are none.
   */
  private offlineSetup(): PocketsphinxSetup | null {
    const assistant = this.assistants.current();
    if (this.asrSetup === null || assistant === null) return this.asrSetup;
    if (this.modelSetup?.modelId !== assistant.modelId) {
      const phrases = [
        ...this.config.phrases,
        ...(assistant.phrases ?? []),
        ...buttonTitles(assistant.domain),
      ];
      this.modelSetup = {
        modelId: assistant.modelId,
        setup:
          phrases.length === this.config.phrases.length
            ? this.asrSetup
            : pocketsphinxSetup({ modelDir: this.modelDir, phrases }),
      };
    }
    return this.modelSetup.setup;
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
    return this.offlineSetup()?.mode ?? null;
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
    const setup = this.offlineSetup();
    if (setup === null) throw new Error(`no recognizer for asr.name ${name}`);
    return new PocketsphinxRecognizer(setup);
  }

  getSynthesizer(): SpeechSynthesizer {
    return this.synthesizer;
  }
}

/** Titles of the buttons in the domain's responses: what callers say to pick one. */
function buttonTitles(domain: Domain): string[] {
  const titles: string[] = [];
  for (const variations of Object.values(domain.responses)) {
    for (const variation of variations) {
      const buttons = variation.buttons;
      if (!Array.isArray(buttons)) continue;
      for (const button of buttons) {
        const title = (button as { title?: unknown } | null)?.title;
        if (typeof title === 'string' && title.length > 0) titles.push(title);
      }
    }
  }
  return titles;
}
