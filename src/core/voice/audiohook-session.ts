import { type JsonObject } from 'src/core/events/event-base';
import {
  AUDIOHOOK_VERSION,
  CLIENT_MESSAGE_TYPES,
  type ClientMessageType,
  type DisconnectReason,
  durationToMs,
  externalChannel,
  isDuration,
  isUuid,
  MAX_TEXT_MESSAGE_LENGTH,
  type MediaFormat,
  NULL_UUID,
  type OpenParameters,
  selectMedia,
} from 'src/core/voice/audiohook-protocol';

/** How the session talks to its WebSocket. */
export interface AudioHookTransport {
  sendText(text: string): void;
  sendBinary(data: Uint8Array): void;
  /** Closes the socket (normal closure unless a code is given). */
  close(code?: number, reason?: string): void;
}

/** What the application (the call) hears from the session. */
export interface AudioHookListener {
  /** `opened` was sent; `media` is null for a connection probe. */
  onOpen(open: OpenParameters, media: MediaFormat | null, probe: boolean): void;
  /** Caller audio (the external channel, PCMU 8 kHz mono). */
  onAudio(audio: Uint8Array): void;
  onDtmf(digit: string): void;
  onPlaybackStarted(): void;
  onPlaybackCompleted(): void;
  onPaused(): void;
  onResumed(): void;
  onUpdate(parameters: JsonObject): void;
  /** The client reported an error; `retryAfterMs` is set for 429. */
  onClientError(code: number, message: string, retryAfterMs: number | null): void;
  /** The client sent `close` (the caller hung up, or it answers our `disconnect`). */
  onClose(reason: string): void;
  /** The session is over (socket closed); called exactly once. */
  onEnd(): void;
}

export interface AudioHookLogger {
  warn(message: string, context?: JsonObject): void;
  debug(message: string, context?: JsonObject): void;
}

export type SessionState = 'preparing' | 'active' | 'paused' | 'disconnecting' | 'closed' | 'ended';

export interface AudioHookSessionOptions {
  /** `Audiohook-Session-Id` of the upgrade request. */
  readonly sessionId: string;
  /** `Audiohook-Organization-Id` of the upgrade request. */
  readonly organizationId: string;
  /** Socket is closed this long after our `disconnect` if the client sends no `close`. */
  readonly disconnectTimeoutMs?: number;
  /** Socket is closed this long after `closed` if the client keeps it open. */
  readonly closeTimeoutMs?: number;
}

/**
 * The server side of one AudioHook session: validates every client message (envelope, version,
 * session id, `seq`/`serverseq`), answers the protocol (`opened`, `pong`, `closed`, `updated`),
 * sends `pause`/`resume` when asked (the client answers `paused`/`resumed`; a client `pause` or
 * `resume` is a protocol error), and hands media and events to the listener. Any protocol violation ends
 * the session with a `disconnect` `error` naming the problem; the socket is never left hanging.
 */
export class AudioHookSession {
  private stateValue: SessionState = 'preparing';
  private serverSeq = 0;
  private clientSeq = 0;
  private mediaFormat: MediaFormat | null = null;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private ended = false;
  private pauseRequested = false;
  private resumeRequested = false;

  constructor(
    private readonly options: AudioHookSessionOptions,
    private readonly transport: AudioHookTransport,
    private readonly listener: AudioHookListener,
    private readonly logger: AudioHookLogger,
  ) {}

  get state(): SessionState {
    return this.stateValue;
  }

  get media(): MediaFormat | null {
    return this.mediaFormat;
  }

  /** Sequence number of our last message (for tests and logs). */
  get lastServerSeq(): number {
    return this.serverSeq;
  }

  // ---------------------------------------------------------------- inbound

  handleText(text: string): void {
    if (this.ended) return;
    if (text.length > MAX_TEXT_MESSAGE_LENGTH) {
      this.fail('Text message too large (>64K)');
      return;
    }
    let message: unknown;
    try {
      message = JSON.parse(text);
    } catch {
      this.fail('Invalid message: not valid JSON');
      return;
    }
    if (message === null || typeof message !== 'object' || Array.isArray(message)) {
      this.fail('Invalid message: not a JSON object');
      return;
    }
    this.handleMessage(message as JsonObject);
  }

  handleBinary(data: Uint8Array): void {
    if (this.ended) return;
    if (
      this.stateValue === 'paused' ||
      this.stateValue === 'disconnecting' ||
      this.stateValue === 'closed'
    ) {
      return; // audio racing a pause or the end of the session is dropped
    }
    if (this.stateValue !== 'active' || this.mediaFormat === null) {
      this.fail(`Received audio in state ${this.stateValue}`);
      return;
    }
    if (data.length % this.mediaFormat.channels.length !== 0) {
      this.fail('Audio frame length is not a multiple of the channel count');
      return;
    }
    this.listener.onAudio(externalChannel(data, this.mediaFormat));
  }

  /** The WebSocket closed (by either side). */
  handleSocketClosed(): void {
    if (this.ended) return;
    this.ended = true;
    this.stateValue = 'ended';
    this.clearTimer();
    this.listener.onEnd();
  }

  private handleMessage(message: JsonObject): void {
    const { version, id, type, seq, serverseq, position, parameters } = message;
    if (this.stateValue === 'disconnecting') {
      // We already ended the session (perhaps because the client's numbering broke): only its
      // `close` matters now, whatever its seq; anything else is ignored until the timer closes.
      if (type === 'close' && typeof seq === 'number') {
        this.clientSeq = seq;
        this.onCloseMessage(isObject(parameters) ? parameters : {});
      }
      return;
    }
    if (version !== AUDIOHOOK_VERSION) {
      this.fail(`Invalid message: version must be "${AUDIOHOOK_VERSION}"`);
      return;
    }
    if (typeof type !== 'string') {
      this.fail('Invalid message: type must be a string');
      return;
    }
    if (!isUuid(id) || id.toLowerCase() !== this.options.sessionId.toLowerCase()) {
      this.fail('Invalid message: id does not match the session id');
      return;
    }
    if (typeof seq !== 'number' || !Number.isInteger(seq) || seq !== this.clientSeq + 1) {
      this.fail('Invalid seq value (not monotonically increasing)');
      return;
    }
    this.clientSeq = seq;
    if (
      typeof serverseq !== 'number' ||
      !Number.isInteger(serverseq) ||
      serverseq < 0 ||
      serverseq > this.serverSeq
    ) {
      this.fail('Invalid serverseq value');
      return;
    }
    if (!isDuration(position)) {
      this.fail('Invalid message: position must be an ISO-8601 duration like PT1.5S');
      return;
    }
    if (parameters === null || typeof parameters !== 'object' || Array.isArray(parameters)) {
      this.fail('Invalid message: parameters must be an object');
      return;
    }
    if (!(CLIENT_MESSAGE_TYPES as readonly string[]).includes(type)) {
      this.fail(`Invalid message: '${type}' is not a supported client message`);
      return;
    }
    this.dispatch(type as ClientMessageType, parameters as JsonObject);
  }

  private dispatch(type: ClientMessageType, parameters: JsonObject): void {
    if (
      this.stateValue === 'preparing' &&
      type !== 'open' &&
      type !== 'close' &&
      type !== 'ping' &&
      type !== 'error'
    ) {
      this.fail(`Invalid message: '${type}' before 'open'`);
      return;
    }
    switch (type) {
      case 'open':
        this.onOpenMessage(parameters);
        return;
      case 'close':
        this.onCloseMessage(parameters);
        return;
      case 'ping':
        this.send('pong', {});
        return;
      case 'update':
        this.send('updated', {});
        this.listener.onUpdate(parameters);
        return;
      case 'paused':
        // the answer to our `pause`, or the client pausing on its own (e.g. hold)
        this.pauseRequested = false;
        if (this.stateValue === 'active') this.stateValue = 'paused';
        this.listener.onPaused();
        return;
      case 'resumed':
        // the answer to our `resume`, or the end of a pause of the client's own
        this.resumeRequested = false;
        if (this.stateValue === 'paused') this.stateValue = 'active';
        this.listener.onResumed();
        return;
      case 'discarded':
        this.logger.debug('client discarded audio', { parameters });
        return;
      case 'error': {
        const code = typeof parameters.code === 'number' ? parameters.code : 0;
        const text = typeof parameters.message === 'string' ? parameters.message : '';
        this.listener.onClientError(code, text, durationToMs(parameters.retryAfter));
        return;
      }
      case 'dtmf':
        if (typeof parameters.digit !== 'string' || !/^[0-9*#A-D]$/.test(parameters.digit)) {
          this.fail('Invalid message: dtmf digit must be one of 0-9 * # A-D');
          return;
        }
        this.listener.onDtmf(parameters.digit);
        return;
      case 'playback_started':
        this.listener.onPlaybackStarted();
        return;
      case 'playback_completed':
        this.listener.onPlaybackCompleted();
        return;
    }
  }

  private onOpenMessage(parameters: JsonObject): void {
    if (this.stateValue !== 'preparing') {
      this.fail(`Invalid message: 'open' in state ${this.stateValue}`);
      return;
    }
    const {
      organizationId,
      conversationId,
      participant,
      media,
      language,
      inputVariables,
      customConfig,
    } = parameters;
    if (!isUuid(organizationId) || !isUuid(conversationId)) {
      this.fail('Invalid open: organizationId and conversationId must be UUIDs');
      return;
    }
    if (organizationId.toLowerCase() !== this.options.organizationId.toLowerCase()) {
      this.disconnect('unauthorized', 'organizationId does not match Audiohook-Organization-Id');
      return;
    }
    if (participant === null || typeof participant !== 'object' || Array.isArray(participant)) {
      this.fail('Invalid open: participant must be an object');
      return;
    }
    const p = participant as JsonObject;
    if (!Array.isArray(media)) {
      this.fail('Invalid open: media must be a list');
      return;
    }
    const open: OpenParameters = {
      organizationId,
      conversationId,
      participant: {
        id: typeof p.id === 'string' ? p.id : NULL_UUID,
        ani: typeof p.ani === 'string' ? p.ani : '',
        aniName: typeof p.aniName === 'string' ? p.aniName : '',
        dnis: typeof p.dnis === 'string' ? p.dnis : '',
      },
      media: media as unknown[],
      ...(typeof language === 'string' ? { language } : {}),
      ...(isStringMap(inputVariables) ? { inputVariables } : {}),
      ...(customConfig !== null && typeof customConfig === 'object' && !Array.isArray(customConfig)
        ? { customConfig: customConfig as JsonObject }
        : {}),
    };
    const probe = conversationId === NULL_UUID;
    if (probe) {
      this.stateValue = 'active';
      this.send('opened', { startPaused: false, media: [] });
      this.listener.onOpen(open, null, true);
      return;
    }
    const chosen = selectMedia(open.media);
    if (chosen === null) {
      this.fail('No supported format found (PCMU, 8000 Hz, external channel)');
      return;
    }
    this.mediaFormat = chosen;
    this.stateValue = 'active';
    this.send('opened', { startPaused: false, media: [chosen as unknown as JsonObject] });
    this.listener.onOpen(open, chosen, false);
  }

  private onCloseMessage(parameters: JsonObject): void {
    if (this.stateValue === 'closed') {
      this.fail("Invalid message: 'close' after 'closed'");
      return;
    }
    this.stateValue = 'closed';
    this.clearTimer();
    const reason = typeof parameters.reason === 'string' ? parameters.reason : 'end';
    this.listener.onClose(reason);
    this.send('closed', {});
    this.armTimer(this.options.closeTimeoutMs ?? 5000, () => this.transport.close());
  }

  // --------------------------------------------------------------- outbound

  /** Sends an `event` with the given entities (e.g. `barge_in`). */
  sendEvent(entities: ReadonlyArray<{ type: string; data: JsonObject }>): void {
    if (this.stateValue !== 'active' && this.stateValue !== 'paused') return;
    this.send('event', { entities: entities });
  }

  /** Sends binary audio when the session can carry it; false otherwise. */
  sendAudio(data: Uint8Array): boolean {
    if (this.ended || this.stateValue !== 'active' || this.mediaFormat === null) return false;
    this.transport.sendBinary(data);
    return true;
  }

  /**
   * Asks the client to stop streaming audio (`pause`; it answers `paused`). Audio sent before
   * its answer is still taken. No effect unless the session is active and not already pausing.
   */
  pause(): void {
    if (this.stateValue !== 'active' || this.pauseRequested) return;
    this.pauseRequested = true;
    this.resumeRequested = false;
    this.send('pause', {});
  }

  /** Asks the client to stream again (`resume`; it answers `resumed`) after a `pause`. */
  resume(): void {
    if (this.resumeRequested) return;
    if (this.stateValue !== 'paused' && !(this.stateValue === 'active' && this.pauseRequested)) {
      return;
    }
    this.pauseRequested = false;
    this.resumeRequested = true;
    this.send('resume', {});
  }

  /** True between our `pause` and the client's `paused`. */
  get pausing(): boolean {
    return this.pauseRequested;
  }

  /** Ends the session from our side; the client answers with `close`. */
  disconnect(
    reason: DisconnectReason,
    info?: string,
    outputVariables?: Record<string, string>,
  ): void {
    if (this.ended || this.stateValue === 'disconnecting' || this.stateValue === 'closed') return;
    this.stateValue = 'disconnecting';
    const parameters: JsonObject = { reason };
    if (info !== undefined) parameters.info = info;
    if (outputVariables !== undefined) parameters.outputVariables = outputVariables;
    this.send('disconnect', parameters);
    this.armTimer(this.options.disconnectTimeoutMs ?? 10_000, () => this.transport.close());
  }

  private fail(info: string): void {
    this.logger.warn('AudioHook protocol error', { info, sessionId: this.options.sessionId });
    if (this.stateValue === 'closed') {
      this.transport.close(1002, 'protocol error');
      return;
    }
    // After our own disconnect further errors are not reported again (the timer closes).
    this.disconnect('error', info);
  }

  private send(type: string, parameters: JsonObject): void {
    if (this.ended) return;
    this.serverSeq += 1;
    this.transport.sendText(
      JSON.stringify({
        version: AUDIOHOOK_VERSION,
        id: this.options.sessionId,
        type,
        seq: this.serverSeq,
        clientseq: this.clientSeq,
        parameters,
      }),
    );
  }

  private armTimer(ms: number, fn: () => void): void {
    this.clearTimer();
    this.timer = setTimeout(fn, ms);
    this.timer.unref?.();
  }

  private clearTimer(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }
}

function isObject(value: unknown): value is JsonObject {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function isStringMap(value: unknown): value is Record<string, string> {
  return (
    value !== null &&
    typeof value === 'object' &&
    !Array.isArray(value) &&
    Object.values(value).every((v) => typeof v === 'string')
  );
}
