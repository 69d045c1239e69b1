import {
  Inject,
  Injectable,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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
  type PocketsphinxSetup,
  pocketsphinxSetup,
} from './pocketsphinx-asr';
import { ProcessTts } from './process-tts';
import { DEFAULT_POOL_SIZE, MAX_POOL_SIZE, RecognizerPool } from './recognizer-pool';

/**
 * Builds the engines named by `asr.name` / `tts.name`: one recognizer per call, one shared
 * synthesizer (its cache is shared by all calls). Set-up problems surface at start-up. The
 * offline recogniser's grammars live in a private folder of this server (mode 0700), removed at
 * shutdown together with every pocketsphinx process (warm or in a call).
 */
@Injectable()
export class SpeechEngineFactory implements OnApplicationBootstrap, OnApplicationShutdown {
  private warmTimer: ReturnType<typeof setInterval> | null = null;
  private readonly grammarDir: string | null = null;
  private readonly digits: boolean | 'auto' = 'auto';
  /** Warm pocketsphinx processes shared by all calls (`asr.pool_size`, default 8, at most 16); null for cloud ASR. */
  readonly pool: RecognizerPool | null = null;
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
    const poolSize = config.asr.options.pool_size ?? DEFAULT_POOL_SIZE;
    if (
      typeof poolSize !== 'number' ||
      !Number.isInteger(poolSize) ||
      poolSize < 1 ||
      poolSize > MAX_POOL_SIZE
    ) {
      throw new Error(
        `${config.provider}.asr.pool_size: must be an integer from 1 to ${MAX_POOL_SIZE}`,
      );
    }
    const digits = config.asr.options.digits ?? 'auto';
    if (digits !== 'auto' && typeof digits !== 'boolean') {
      throw new Error(`${config.provider}.asr.digits: must be true, false or auto`);
    }
    this.digits = digits;
    this.grammarDir = mkdtempSync(join(tmpdir(), 'parley-voice-')); // mode 0700
    // Checked at start-up: a missing acoustic model stops Parley with a clear message.
    this.asrSetup = pocketsphinxSetup(
      { modelDir: this.modelDir, phrases: config.phrases, digits: this.digits },
      this.grammarDir,
    );
    this.pool = new RecognizerPool(poolSize);
  }

  /** Fills the warm pool for the current model's grammar (called once the server listens). */
  warmUp(): void {
    // nothing to warm before a model or phrases exist (the first call starts the processes)
    if (this.assistants.current() === null && this.config.phrases.length === 0) return;
    const setup = this.offlineSetup();
    if (setup !== null) this.pool?.warm(setup);
  }

  /** Warms the pool now and again whenever another model is loaded (checked every second). */
  onApplicationBootstrap(): void {
    if (this.pool === null) return;
    this.warmUp();
    this.warmTimer = setInterval(() => this.warmUp(), 1000);
    this.warmTimer.unref();
  }

  async onApplicationShutdown(): Promise<void> {
    if (this.warmTimer !== null) clearInterval(this.warmTimer);
    await this.pool?.close();
    if (this.grammarDir !== null) rmSync(this.grammarDir, { recursive: true, force: true });
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
            : pocketsphinxSetup(
                { modelDir: this.modelDir, phrases, digits: this.digits },
                this.grammarDir ?? tmpdir(),
              ),
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
    if (setup === null || this.pool === null) throw new Error(`no recognizer for asr.name ${name}`);
    return this.pool.acquire(setup);
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
