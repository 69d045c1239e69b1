import { OutputChannel, type BotMessage } from 'src/core/channels/output-channel';
import { type JsonObject } from 'src/core/events/event-base';
import { type MessageHandler } from 'src/core/ports/message-handler';
import { UtteranceBuffer } from 'src/core/voice/outbound-audio';
import { type SpeechRecognizer, type SpeechSynthesizer } from 'src/core/voice/speech-engines';
import { SpeechGate, type SpeechGateOptions } from 'src/core/voice/speech-gate';
import { TokenBucket } from 'src/core/voice/token-bucket';
import {
  DEFAULT_TRANSCRIPT_FILTER,
  TranscriptFilter,
  type TranscriptFilterOptions,
} from 'src/core/voice/transcript-filter';

/** What a call needs from its AudioHook session. */
export interface CallSession {
  sendAudio(data: Uint8Array): boolean;
  sendEvent(entities: ReadonlyArray<{ type: string; data: JsonObject }>): void;
  disconnect(
    reason: 'completed' | 'error',
    info?: string,
    outputVariables?: Record<string, string>,
  ): void;
  /** Asks the client to stop / restart streaming caller audio (AudioHook `pause`/`resume`). */
  pause?(): void;
  resume?(): void;
}

/** Latency of one turn in milliseconds (null when not measurable). */
export interface TurnLatency {
  readonly conversationId: string;
  /** End of caller speech (speech gate) → first audio frame sent: what the caller waits. */
  readonly speechEndToAudioMs: number | null;
  /** End of caller speech (speech gate) → final transcript. */
  readonly asrMs: number | null;
  /** Message handed to the processor → first bot text. */
  readonly processingMs: number | null;
  /** Synthesis started → first audio bytes. */
  readonly ttsFirstByteMs: number | null;
  /** Final transcript → first audio frame sent. */
  readonly transcriptToAudioMs: number | null;
  /** transcriptToAudioMs minus processing and TTS: time Parley itself added. */
  readonly parleyAddedMs: number | null;
}

export interface CallLogger {
  info(message: string, context?: JsonObject): void;
  warn(message: string, context?: JsonObject): void;
}

export interface VoiceCallOptions {
  readonly conversationId: string;
  /** Channel name given to the processor (`genesys`). */
  readonly channel: string;
  /** Metadata of the `/session_start` message (`call_id`, `user_phone`, `bot_phone`, ...). */
  readonly sessionMetadata: JsonObject;
  readonly handler: MessageHandler;
  readonly recognizer: SpeechRecognizer;
  readonly synthesizer: SpeechSynthesizer;
  readonly session: CallSession;
  readonly interruptions: { readonly enabled: boolean; readonly minWords: number };
  /** Caller silence after the bot finished speaking that sends `/silence_timeout`; null = off. */
  readonly silenceTimeoutMs: number | null;
  /** `outputVariables` of the final `disconnect` (read when the bot hangs up). */
  readonly outputVariables: () => Promise<Record<string, string>>;
  readonly nowMs: () => number;
  readonly logger: CallLogger;
  readonly onLatency?: (latency: TurnLatency) => void;
  /** Speech gate tuning (pre-roll, hangover, noise floor margin, ...). */
  readonly speechGate?: Partial<SpeechGateOptions>;
  /** Which final transcripts make a turn (fillers, minimum confidence). */
  readonly transcripts?: TranscriptFilterOptions;
  /**
   * A turn still being handled after this long pauses the caller's audio (AudioHook `pause`)
   * until it is done (`resume`); null = never.
   */
  readonly pauseAudioAfterMs?: number | null;
  /** Binary sends: 5 per second on average, 25 at once (Genesys inbound limits). */
  readonly rate?: { readonly perSecond: number; readonly burst: number };
}

export function countWords(text: string): number {
  return text
    .replace(/[^\p{L}\p{N}\s']/gu, ' ')
    .split(/\s+/)
    .filter((w) => w.length > 0).length;
}

/**
 * The output channel of a call: bot texts become speech; `hangup()` ends the call once the
 * caller has heard everything (Rasa's `action_hangup` calls it).
 */
export class VoiceOutputChannel extends OutputChannel {
  constructor(
    readonly name: string,
    private readonly call: VoiceCall,
  ) {
    super();
  }

  send(_recipientId: string, message: BotMessage): Promise<void> {
    if (typeof message.text === 'string' && message.text.trim().length > 0) {
      this.call.say(message.text);
    }
    const custom = message.custom;
    if (custom !== null && typeof custom === 'object' && (custom as JsonObject).hangup === true) {
      this.call.hangup();
    }
    return Promise.resolve();
  }

  hangup(_recipientId?: string): Promise<void> {
    this.call.hangup();
    return Promise.resolve();
  }
}

interface Turn {
  finalAt: number | null;
  speechEndAt: number | null;
  handledAt: number;
  firstTextAt: number | null;
  ttsStartAt: number | null;
  ttsFirstByteAt: number | null;
  reported: boolean;
}

/**
 * One phone call: caller audio → VAD and ASR → transcripts → the dialogue processor → bot texts →
 * TTS → buffered, rate-limited binary audio; barge-in, silence timeout and hang-up.
 */
export class VoiceCall {
  readonly output: VoiceOutputChannel;
  private readonly gate: SpeechGate;
  private readonly filter: TranscriptFilter;
  private pauseTimer: ReturnType<typeof setTimeout> | null = null;
  private audioPaused = false;
  private readonly bucket: TokenBucket;
  private readonly audioQueue: Uint8Array[] = [];
  private pumpTimer: ReturnType<typeof setTimeout> | null = null;
  private silenceTimer: ReturnType<typeof setTimeout> | null = null;
  private dtmfTimer: ReturnType<typeof setTimeout> | null = null;
  private dtmfDigits = '';
  private turnChain: Promise<void> = Promise.resolve();
  private speechChain: Promise<void> = Promise.resolve();
  private pendingUtterances = 0;
  private generation = 0;
  private playbackActive = false;
  private lastAudioSentAt = -1;
  private lastPlaybackCompletedAt = -1;
  private hangupRequested = false;
  private finished = false;
  private lastSpeechEndAt: number | null = null;
  private currentTurn: Turn | null = null;
  /** Count of barge-ins (for tests and metrics). */
  bargeIns = 0;
  /** Final transcripts dropped by the filter, and gate candidates dropped as noise. */
  droppedTranscripts = 0;
  rejectedNoises = 0;

  constructor(private readonly options: VoiceCallOptions) {
    this.output = new VoiceOutputChannel(options.channel, this);
    const rate = options.rate ?? { perSecond: 5, burst: 25 };
    this.bucket = new TokenBucket(rate.perSecond, rate.burst, options.nowMs);
    this.gate = new SpeechGate(options.speechGate);
    this.filter = new TranscriptFilter(options.transcripts ?? DEFAULT_TRANSCRIPT_FILTER);
    options.recognizer.onEvent((event) => {
      if (event.kind === 'final') this.onFinalTranscript(event.text, event.confidence);
      else this.onInterimTranscript(event.text);
    });
    options.recognizer.onError((error) =>
      options.logger.warn('speech recognizer failed', { error: error.message }),
    );
  }

  get isBotSpeaking(): boolean {
    return this.playbackActive || this.audioQueue.length > 0 || this.pendingUtterances > 0;
  }

  /** Starts the conversation: `/session_start` with the call metadata. */
  start(): void {
    this.submit('/session_start', this.options.sessionMetadata, null);
  }

  // ------------------------------------------------------------ caller side

  onAudio(audio: Uint8Array): void {
    if (this.finished) return;
    const recognizer = this.options.recognizer;
    const gated = recognizer.gated === true;
    for (const event of this.gate.push(audio)) {
      switch (event.type) {
        case 'speech_start':
          this.cancelSilenceTimer();
          break;
        case 'audio':
          if (gated) recognizer.sendAudio(event.audio);
          break;
        case 'speech_end':
          // the gate decides after its hangover: date the end where the speech stopped
          this.lastSpeechEndAt = this.options.nowMs() - (this.gate.positionMs - event.endMs);
          if (gated) recognizer.endOfSpeech?.();
          break;
        case 'rejected':
          this.rejectedNoises++;
          break;
      }
    }
    if (!gated) recognizer.sendAudio(audio);
  }

  onDtmf(digit: string): void {
    if (this.finished) return;
    this.cancelSilenceTimer();
    if (this.dtmfTimer !== null) clearTimeout(this.dtmfTimer);
    if (digit === '#') {
      this.flushDtmf();
      return;
    }
    this.dtmfDigits += digit;
    this.dtmfTimer = setTimeout(() => this.flushDtmf(), 1500);
    this.dtmfTimer.unref?.();
  }

  onPlaybackStarted(): void {
    this.playbackActive = true;
    this.cancelSilenceTimer();
  }

  onPlaybackCompleted(): void {
    this.playbackActive = false;
    this.lastPlaybackCompletedAt = this.options.nowMs();
    this.checkHangup();
    this.armSilenceTimerIfIdle();
  }

  /** Genesys answered 429: hold all binary sends for `retryAfterMs`. */
  onRateLimited(retryAfterMs: number): void {
    this.bucket.block(retryAfterMs);
    this.schedulePump();
  }

  /** The caller hung up (client `close` without our `disconnect`). */
  onCallerHangup(): void {
    if (this.finished) return;
    this.submit('/session_end', null, null);
    this.finish();
  }

  /** The session is over: stop everything. */
  finish(): void {
    if (this.finished) return;
    this.finished = true;
    this.generation++;
    this.audioQueue.length = 0;
    for (const t of [this.pumpTimer, this.silenceTimer, this.dtmfTimer, this.pauseTimer]) {
      if (t !== null) clearTimeout(t);
    }
    this.options.recognizer
      .close()
      .catch((error: unknown) =>
        this.options.logger.warn('closing the recognizer failed', { error: String(error) }),
      );
  }

  /** Resolves when every queued turn has been handled (tests, shutdown). */
  async idle(): Promise<void> {
    await this.turnChain;
    await this.speechChain;
  }

  // --------------------------------------------------------------- bot side

  say(text: string): void {
    if (this.finished) return;
    const turn = this.currentTurn;
    if (turn !== null && turn.firstTextAt === null) turn.firstTextAt = this.options.nowMs();
    this.cancelSilenceTimer();
    this.pendingUtterances++;
    const generation = this.generation;
    this.speechChain = this.speechChain
      .then(() => this.speak(text, generation, turn))
      .catch((error: unknown) =>
        this.options.logger.warn('speech synthesis failed', { error: String(error) }),
      )
      .finally(() => {
        this.pendingUtterances--;
        this.checkHangup();
        this.armSilenceTimerIfIdle();
      });
  }

  hangup(): void {
    this.speechChain = this.speechChain.then(() => {
      this.hangupRequested = true;
      this.checkHangup();
    });
  }

  private async speak(text: string, generation: number, turn: Turn | null): Promise<void> {
    if (generation !== this.generation || this.finished) return;
    const buffer = new UtteranceBuffer();
    const started = this.options.nowMs();
    if (turn !== null && turn.ttsStartAt === null) turn.ttsStartAt = started;
    for await (const chunk of this.options.synthesizer.synthesize(text)) {
      if (generation !== this.generation || this.finished) return;
      if (turn !== null && turn.ttsFirstByteAt === null) turn.ttsFirstByteAt = this.options.nowMs();
      for (const message of buffer.push(chunk)) this.enqueueAudio(message, turn);
    }
    if (generation !== this.generation || this.finished) return;
    for (const message of buffer.end()) this.enqueueAudio(message, turn);
  }

  private enqueueAudio(message: Uint8Array, turn: Turn | null): void {
    this.audioQueue.push(message);
    this.pump(turn);
  }

  private pump(turn: Turn | null = null): void {
    while (this.audioQueue.length > 0 && !this.finished) {
      if (!this.bucket.tryTake()) {
        this.schedulePump();
        return;
      }
      const message = this.audioQueue.shift();
      if (message === undefined) break;
      if (this.options.session.sendAudio(message)) {
        this.lastAudioSentAt = this.options.nowMs();
        if (turn !== null) this.reportLatency(turn);
      }
    }
    this.checkHangup();
  }

  private schedulePump(): void {
    if (this.pumpTimer !== null || this.finished) return;
    this.pumpTimer = setTimeout(
      () => {
        this.pumpTimer = null;
        this.pump();
      },
      Math.max(1, this.bucket.waitMs()),
    );
    this.pumpTimer.unref?.();
  }

  private bargeIn(): void {
    this.bargeIns++;
    this.generation++;
    this.audioQueue.length = 0;
    this.options.session.sendEvent([{ type: 'barge_in', data: {} }]);
    this.options.logger.info('caller barged in', { conversationId: this.options.conversationId });
  }

  private checkHangup(): void {
    if (!this.hangupRequested || this.finished) return;
    if (this.audioQueue.length > 0 || this.pendingUtterances > 0) return;
    const heardEverything =
      this.lastAudioSentAt < 0 ||
      (this.lastPlaybackCompletedAt >= this.lastAudioSentAt && !this.playbackActive);
    if (!heardEverything) return;
    this.hangupRequested = false;
    this.cancelSilenceTimer();
    this.options
      .outputVariables()
      .catch((error: unknown) => {
        this.options.logger.warn('reading outputVariables failed', { error: String(error) });
        return {};
      })
      .then((variables) => this.options.session.disconnect('completed', '', variables))
      .catch(() => undefined);
  }

  // ------------------------------------------------------------- transcripts

  private onInterimTranscript(text: string): void {
    if (countWords(text) === 0) return;
    this.cancelSilenceTimer();
    this.maybeBargeIn(text);
  }

  private onFinalTranscript(text: string, confidence?: number): void {
    if (this.finished) return;
    const verdict = this.filter.judge(text, confidence);
    if (!verdict.accepted) {
      this.droppedTranscripts++;
      this.options.logger.info('transcript dropped', {
        conversationId: this.options.conversationId,
        reason: verdict.reason,
        text,
        ...(confidence !== undefined ? { confidence } : {}),
      });
      return;
    }
    const trimmed = verdict.text;
    this.cancelSilenceTimer();
    this.maybeBargeIn(trimmed);
    this.submit(trimmed, null, this.options.nowMs());
  }

  private maybeBargeIn(text: string): void {
    const { enabled, minWords } = this.options.interruptions;
    if (enabled && this.isBotSpeaking && countWords(text) >= minWords) this.bargeIn();
  }

  private flushDtmf(): void {
    this.dtmfTimer = null;
    const digits = this.dtmfDigits;
    this.dtmfDigits = '';
    if (digits.length > 0) this.submit(digits, { dtmf: true }, null);
  }

  private submit(text: string, metadata: JsonObject | null, finalAt: number | null): void {
    const speechEndAt = finalAt !== null ? this.lastSpeechEndAt : null;
    this.turnChain = this.turnChain
      .then(async () => {
        const turn: Turn = {
          finalAt,
          speechEndAt,
          handledAt: this.options.nowMs(),
          firstTextAt: null,
          ttsStartAt: null,
          ttsFirstByteAt: null,
          reported: false,
        };
        this.currentTurn = turn;
        this.armPauseTimer();
        await this.options.handler.handleMessage({
          text,
          senderId: this.options.conversationId,
          inputChannel: this.options.channel,
          output: this.output,
          metadata,
        });
        this.currentTurn = null;
        this.endPause();
        this.armSilenceTimerIfIdle();
      })
      .catch((error: unknown) => {
        this.currentTurn = null;
        this.endPause();
        this.options.logger.warn('handling a voice message failed', { error: String(error) });
      });
  }

  private reportLatency(turn: Turn): void {
    if (turn.reported || turn.finalAt === null) return;
    turn.reported = true;
    const now = this.options.nowMs();
    const diff = (a: number | null, b: number | null): number | null =>
      a !== null && b !== null ? Math.max(0, a - b) : null;
    const processingMs = diff(turn.firstTextAt, turn.handledAt);
    const ttsFirstByteMs = diff(turn.ttsFirstByteAt, turn.ttsStartAt);
    const transcriptToAudioMs = now - turn.finalAt;
    const latency: TurnLatency = {
      conversationId: this.options.conversationId,
      speechEndToAudioMs: diff(now, turn.speechEndAt),
      asrMs: diff(turn.finalAt, turn.speechEndAt),
      processingMs,
      ttsFirstByteMs,
      transcriptToAudioMs,
      parleyAddedMs: Math.max(0, transcriptToAudioMs - (processingMs ?? 0) - (ttsFirstByteMs ?? 0)),
    };
    this.options.logger.info('voice turn latency', { ...latency });
    this.options.onLatency?.(latency);
  }

  // ------------------------------------------------------------------- pause

  /** Long turns (a slow custom action) pause the caller's audio until they are handled. */
  private armPauseTimer(): void {
    const ms = this.options.pauseAudioAfterMs ?? null;
    if (ms === null || this.options.session.pause === undefined) return;
    if (this.pauseTimer !== null) clearTimeout(this.pauseTimer);
    this.pauseTimer = setTimeout(() => {
      this.pauseTimer = null;
      if (this.finished || this.currentTurn === null || this.audioPaused) return;
      this.audioPaused = true;
      for (const event of this.gate.flush()) {
        if (event.type === 'speech_end' && this.options.recognizer.gated === true) {
          this.options.recognizer.endOfSpeech?.();
        }
      }
      this.options.session.pause?.();
    }, ms);
    this.pauseTimer.unref?.();
  }

  private endPause(): void {
    if (this.pauseTimer !== null) clearTimeout(this.pauseTimer);
    this.pauseTimer = null;
    if (!this.audioPaused || this.finished) return;
    this.audioPaused = false;
    this.options.session.resume?.();
  }

  // ----------------------------------------------------------------- silence

  private armSilenceTimerIfIdle(): void {
    const ms = this.options.silenceTimeoutMs;
    if (ms === null || this.finished || this.hangupRequested) return;
    if (this.isBotSpeaking || this.currentTurn !== null || this.silenceTimer !== null) return;
    if (this.lastAudioSentAt < 0) return; // the bot has not spoken yet
    this.silenceTimer = setTimeout(() => {
      this.silenceTimer = null;
      if (!this.finished && !this.isBotSpeaking) this.submit('/silence_timeout', null, null);
    }, ms);
    this.silenceTimer.unref?.();
  }

  private cancelSilenceTimer(): void {
    if (this.silenceTimer !== null) clearTimeout(this.silenceTimer);
    this.silenceTimer = null;
  }
}
