import { Inject, Injectable, Logger } from '@nestjs/common';
import {
  type AudioHookListener,
  AudioHookSession,
  ConversationReader,
  EventVerbosity,
  type JsonObject,
  MessageHandler,
  type OpenParameters,
  VoiceCall,
} from 'src/core';
import { ChannelInput } from 'src/modules/channels';
import { type RawData, type WebSocket } from 'ws';
import { SpeechEngineFactory } from './engines/speech-engine.factory';
import { type AuthOutcome } from './voice-auth.service';
import { type VoiceGatewayConfig } from './voice-credentials';
import { VOICE_CONFIG } from './voice-gateway.tokens';
import { VoiceMetrics } from './voice-metrics';

type Authenticated = Extract<AuthOutcome, { ok: true }>;

function toBytes(data: RawData): Buffer {
  if (Buffer.isBuffer(data)) return data;
  if (Array.isArray(data)) return Buffer.concat(data);
  return Buffer.from(data);
}

/** `tel:+14155550100` → `+14155550100` (everything up to the last `:` removed, as Rasa does). */
export function stripTelPrefix(value: string): string {
  const colon = value.lastIndexOf(':');
  return colon >= 0 ? value.slice(colon + 1) : value;
}

/**
 * Runs one AudioHook session per accepted WebSocket and, once `open` arrives for a real call,
 * one VoiceCall wired to the dialogue processor (the MessageHandler port, through the channels'
 * input contract), the speech engines and the ConversationReader port (for `outputVariables`).
 */
@Injectable()
export class VoiceGatewayService {
  private readonly logger = new Logger(VoiceGatewayService.name);
  private readonly calls = new Set<VoiceCall>();
  private readonly input: ChannelInput;

  constructor(
    @Inject(VOICE_CONFIG) private readonly config: VoiceGatewayConfig,
    private readonly engines: SpeechEngineFactory,
    private readonly metrics: VoiceMetrics,
    handler: MessageHandler,
    private readonly conversations: ConversationReader,
  ) {
    // A failed turn is logged by the call ('handling a voice message failed').
    this.input = new ChannelInput(handler, {
      channel: config.provider,
      log: null,
    });
  }

  get activeCalls(): number {
    return this.calls.size;
  }

  connect(ws: WebSocket, auth: Authenticated): void {
    const log = {
      warn: (message: string, context?: JsonObject) =>
        this.logger.warn(`${message} ${JSON.stringify({ sessionId: auth.sessionId, ...context })}`),
      debug: (message: string, context?: JsonObject) =>
        this.logger.debug(
          `${message} ${JSON.stringify({ sessionId: auth.sessionId, ...context })}`,
        ),
      info: (message: string, context?: JsonObject) =>
        this.logger.log(`${message} ${JSON.stringify({ sessionId: auth.sessionId, ...context })}`),
    };
    let call: VoiceCall | null = null;
    let closedByClient = false;
    let disconnected = false;
    const session: AudioHookSession = new AudioHookSession(
      { sessionId: auth.sessionId, organizationId: auth.organizationId },
      {
        sendText: (text) => ws.send(text),
        sendBinary: (data) => ws.send(data, { binary: true }),
        close: (code, reason) => ws.close(code ?? 1000, reason),
      },
      {
        onOpen: (open, _media, probe) => {
          if (probe) return;
          call = this.startCall(open, session, log, () => {
            disconnected = true;
          });
        },
        onAudio: (audio) => call?.onAudio(audio),
        onDtmf: (digit) => call?.onDtmf(digit),
        onPlaybackStarted: () => call?.onPlaybackStarted(),
        onPlaybackCompleted: () => call?.onPlaybackCompleted(),
        onPaused: () => undefined,
        onResumed: () => undefined,
        onUpdate: (parameters) => log.debug('update', { parameters }),
        onClientError: (code, message, retryAfterMs) => {
          log.warn('client reported an error', { code, message, retryAfterMs });
          if (code === 429) call?.onRateLimited(retryAfterMs ?? 1000);
        },
        onClose: () => {
          closedByClient = true;
          if (call === null) return;
          if (disconnected || session.state === 'disconnecting') call.finish();
          else call.onCallerHangup();
        },
        onEnd: () => {
          if (call === null) return;
          if (!closedByClient && !disconnected) call.onCallerHangup();
          call.finish();
          this.calls.delete(call);
          this.metrics.activeCalls = this.calls.size;
          this.metrics.bargeInsTotal += call.bargeIns;
          this.metrics.droppedTranscriptsTotal += call.droppedTranscripts;
          this.metrics.rejectedNoisesTotal += call.rejectedNoises;
        },
      } satisfies AudioHookListener,
      log,
    );
    ws.on('message', (data: RawData, isBinary: boolean) => {
      try {
        if (isBinary) session.handleBinary(toBytes(data));
        else session.handleText(toBytes(data).toString('utf8'));
      } catch (error) {
        log.warn('voice session failed', { error: String(error) });
        ws.close(1011, 'internal error');
      }
    });
    ws.on('close', () => session.handleSocketClosed());
    ws.on('error', (error) => log.warn('voice socket error', { error: error.message }));
  }

  private startCall(
    open: OpenParameters,
    session: AudioHookSession,
    log: { info: (m: string, c?: JsonObject) => void; warn: (m: string, c?: JsonObject) => void },
    onDisconnect: () => void,
  ): VoiceCall {
    const conversationId = open.conversationId;
    const metadata: JsonObject = {
      call_id: conversationId,
      user_phone: stripTelPrefix(open.participant.ani),
      bot_phone: open.participant.dnis,
      user_name: open.participant.aniName,
    };
    if (open.inputVariables !== undefined) metadata.input_variables = { ...open.inputVariables };
    if (open.language !== undefined) metadata.language = open.language;
    const call = new VoiceCall({
      conversationId,
      channel: this.config.provider,
      sessionMetadata: metadata,
      handler: this.input,
      recognizer: this.engines.createRecognizer(),
      synthesizer: this.engines.getSynthesizer(),
      session: {
        sendAudio: (data) => session.sendAudio(data),
        sendEvent: (entities) => session.sendEvent(entities),
        disconnect: (reason, info, outputVariables) => {
          onDisconnect();
          session.disconnect(reason, info, outputVariables);
        },
        pause: () => session.pause(),
        resume: () => session.resume(),
      },
      speechGate: this.config.speechGate,
      transcripts: this.config.transcripts,
      pauseAudioAfterMs:
        this.config.pauseAudioAfter === null ? null : this.config.pauseAudioAfter * 1000,
      interruptions: this.config.interruptions,
      silenceTimeoutMs:
        this.config.silenceTimeout === null ? null : this.config.silenceTimeout * 1000,
      outputVariables: () => this.outputVariables(conversationId),
      nowMs: () => performance.now(),
      logger: log,
      onLatency: (latency) => this.metrics.recordTurn(latency),
    });
    this.calls.add(call);
    this.metrics.callsTotal++;
    this.metrics.activeCalls = this.calls.size;
    call.start();
    return call;
  }

  /** Slots named in `output_variables`, as strings, from the conversation's tracker. */
  private async outputVariables(conversationId: string): Promise<Record<string, string>> {
    const names = this.config.outputVariables;
    if (names.length === 0) return {};
    const tracker = await this.conversations.trackerState(
      conversationId,
      EventVerbosity.AFTER_RESTART,
    );
    const slots = (tracker.slots ?? {}) as JsonObject;
    const out: Record<string, string> = {};
    for (const name of names) {
      const value = slots[name];
      if (value === undefined || value === null) continue;
      out[name] = typeof value === 'string' ? value : JSON.stringify(value);
    }
    return out;
  }
}
