import { type UserMessage } from 'src/core/channels/user-message';
import { type JsonObject } from 'src/core/events/event-base';
import { MessageHandler } from 'src/core/ports/message-handler';
import {
  type RecognitionEvent,
  type SpeechRecognizer,
  type SpeechSynthesizer,
} from 'src/core/voice/speech-engines';
import { countWords, VoiceCall } from 'src/core/voice/voice-call';

class FakeRecognizer implements SpeechRecognizer {
  listener: (e: RecognitionEvent) => void = () => undefined;
  closed = false;
  sendAudio(): void {}
  onEvent(listener: (e: RecognitionEvent) => void): void {
    this.listener = listener;
  }
  onError(): void {}
  close(): Promise<void> {
    this.closed = true;
    return Promise.resolve();
  }
}

/** Synthesizes `bytes` bytes per text (1 byte per character × 1000 by default). */
class FakeSynthesizer implements SpeechSynthesizer {
  constructor(private readonly bytesFor: (text: string) => number = (t) => t.length * 1000) {}
  async *synthesize(text: string): AsyncIterable<Uint8Array> {
    const total = this.bytesFor(text);
    for (let sent = 0; sent < total; sent += 8000) {
      await Promise.resolve();
      yield new Uint8Array(Math.min(8000, total - sent)).fill(0xff);
    }
  }
}

/** Answers each user text with the texts in `replies` (and `hangup` for "bye"). */
class ScriptedHandler extends MessageHandler {
  readonly received: Array<{ text: string | null; metadata: JsonObject | null | undefined }> = [];
  constructor(private readonly replies: Record<string, string[]>) {
    super();
  }
  async handleMessage(message: UserMessage): Promise<void> {
    this.received.push({ text: message.text, metadata: message.metadata });
    for (const text of this.replies[message.text ?? ''] ?? []) {
      await message.output.sendResponse(message.senderId, { text });
    }
    if (message.text === 'bye') {
      await message.output.sendResponse(message.senderId, { custom: { hangup: true } });
    }
  }
}

function setup(
  options: {
    replies?: Record<string, string[]>;
    minWords?: number;
    silenceMs?: number | null;
    synth?: FakeSynthesizer;
    handler?: ScriptedHandler;
    pauseAfterMs?: number;
  } = {},
) {
  const pauses: string[] = [];
  const sent: Uint8Array[] = [];
  const events: string[] = [];
  const disconnects: Array<Record<string, string> | undefined> = [];
  const recognizer = new FakeRecognizer();
  const handler = options.handler ?? new ScriptedHandler(options.replies ?? {});
  const call = new VoiceCall({
    conversationId: 'c1',
    channel: 'genesys',
    sessionMetadata: { call_id: 'c1', user_phone: '+1', bot_phone: '+2' },
    handler,
    recognizer,
    synthesizer: options.synth ?? new FakeSynthesizer(),
    session: {
      sendAudio: (data) => {
        sent.push(data);
        return true;
      },
      sendEvent: (entities) => events.push(...entities.map((e) => e.type)),
      disconnect: (_reason, _info, vars) => disconnects.push(vars),
      pause: () => pauses.push('pause'),
      resume: () => pauses.push('resume'),
    },
    pauseAudioAfterMs: options.pauseAfterMs ?? null,
    transcripts: { fillers: ['oh', 'uh', 'um', 'hmm'], minConfidence: 0.5 },
    interruptions: { enabled: options.minWords !== undefined, minWords: options.minWords ?? 3 },
    silenceTimeoutMs: options.silenceMs ?? null,
    outputVariables: () => Promise.resolve({ mood: 'sad' }),
    nowMs: () => Date.now(),
    logger: { info: () => undefined, warn: () => undefined },
  });
  return { call, sent, events, disconnects, recognizer, handler, pauses };
}

async function flush(): Promise<void> {
  for (let i = 0; i < 50; i++) await Promise.resolve();
}

describe(VoiceCall.name, () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('starts the conversation with /session_start carrying the call metadata', async () => {
    const { call, handler } = setup();
    call.start();
    await flush();
    expect(handler.received).toEqual([
      { text: '/session_start', metadata: { call_id: 'c1', user_phone: '+1', bot_phone: '+2' } },
    ]);
  });

  it('sends each utterance as its own messages and paces sends at 25 at once, then 5 per second', async () => {
    const replies = { go: Array.from({ length: 30 }, (_, i) => `u${i}`) };
    const { call, sent, recognizer } = setup({ replies, synth: new FakeSynthesizer(() => 1000) });
    recognizer.listener({ kind: 'final', text: 'go' });
    await flush();
    await call.idle();
    await flush();
    expect(sent.length).toBe(25);
    expect(sent.every((m) => m.length === 1000)).toBe(true);
    jest.advanceTimersByTime(200);
    expect(sent.length).toBe(26);
    jest.advanceTimersByTime(1000);
    expect(sent.length).toBe(30);
  });

  it('sends a long utterance in messages over 32 KB and at most 64,000 bytes', async () => {
    const { call, sent, recognizer } = setup({
      replies: { go: ['long'] },
      synth: new FakeSynthesizer(() => 150_000),
    });
    recognizer.listener({ kind: 'final', text: 'go' });
    await flush();
    await call.idle();
    expect(sent.map((m) => m.length)).toEqual([40_000, 40_000, 40_000, 30_000]);
  });

  it('barges in when the caller says at least min_words words while the bot speaks', async () => {
    const { call, events, recognizer } = setup({ minWords: 2, replies: { go: ['hello'] } });
    recognizer.listener({ kind: 'final', text: 'go' });
    await flush();
    await call.idle();
    call.onPlaybackStarted();
    recognizer.listener({ kind: 'interim', text: 'no' });
    expect(events).toEqual([]);
    recognizer.listener({ kind: 'interim', text: 'no wait' });
    expect(events).toEqual(['barge_in']);
    call.onPlaybackCompleted();
    recognizer.listener({ kind: 'interim', text: 'three more words' });
    expect(events).toEqual(['barge_in']); // bot silent: no barge-in
  });

  it('does not barge in when interruptions are disabled', async () => {
    const { call, events, recognizer } = setup({ replies: { go: ['hello'] } });
    recognizer.listener({ kind: 'final', text: 'go' });
    await flush();
    await call.idle();
    call.onPlaybackStarted();
    recognizer.listener({ kind: 'interim', text: 'stop talking right now' });
    expect(events).toEqual([]);
  });

  it('hangs up only after playback completed, with outputVariables', async () => {
    const { call, sent, disconnects, recognizer } = setup({ replies: { bye: ['goodbye'] } });
    recognizer.listener({ kind: 'final', text: 'bye' });
    await flush();
    await call.idle();
    await flush();
    expect(sent.length).toBe(1);
    expect(disconnects).toEqual([]);
    call.onPlaybackStarted();
    jest.advanceTimersByTime(5);
    call.onPlaybackCompleted();
    await flush();
    expect(disconnects).toEqual([{ mood: 'sad' }]);
  });

  it('sends /silence_timeout when the caller stays silent after the bot finished speaking', async () => {
    const { call, handler, recognizer } = setup({ silenceMs: 1000, replies: { go: ['hello'] } });
    recognizer.listener({ kind: 'final', text: 'go' });
    await flush();
    await call.idle();
    call.onPlaybackStarted();
    jest.advanceTimersByTime(5000);
    call.onPlaybackCompleted();
    jest.advanceTimersByTime(999);
    await flush();
    expect(handler.received.map((m) => m.text)).toEqual(['go']);
    jest.advanceTimersByTime(1);
    await flush();
    expect(handler.received.map((m) => m.text)).toEqual(['go', '/silence_timeout']);
  });

  it('sends /session_end when the caller hangs up and closes the recognizer', async () => {
    const { call, handler, recognizer } = setup();
    call.onCallerHangup();
    await flush();
    expect(handler.received.map((m) => m.text)).toEqual(['/session_end']);
    expect(recognizer.closed).toBe(true);
  });

  it('collects DTMF digits into one message after # or a pause', async () => {
    const { call, handler } = setup();
    call.onDtmf('1');
    call.onDtmf('2');
    call.onDtmf('#');
    await flush();
    call.onDtmf('9');
    jest.advanceTimersByTime(1500);
    await flush();
    expect(handler.received.map((m) => m.text)).toEqual(['12', '9']);
  });

  it('counts words without punctuation', () => {
    expect(countWords('Hi, there!  I am... sad')).toBe(5);
    expect(countWords(' ?! ')).toBe(0);
  });

  it('drops filler-only, empty and low-confidence transcripts: no turn', async () => {
    const { call, recognizer, handler } = setup();
    call.start();
    await flush();
    recognizer.listener({ kind: 'final', text: 'oh' });
    recognizer.listener({ kind: 'final', text: 'uh um' });
    recognizer.listener({ kind: 'final', text: '' });
    recognizer.listener({ kind: 'final', text: 'i am sad', confidence: 0.2 });
    recognizer.listener({ kind: 'final', text: 'i am happy', confidence: 0.9 });
    await flush();
    expect(handler.received.map((m) => m.text)).toEqual(['/session_start', 'i am happy']);
    expect(call.droppedTranscripts).toBe(4);
  });

  it('pauses the caller audio while a turn runs longer than pauseAudioAfterMs, then resumes', async () => {
    let release: () => void = () => undefined;
    class SlowHandler extends ScriptedHandler {
      override async handleMessage(message: UserMessage): Promise<void> {
        await super.handleMessage(message);
        if (message.text === 'check my order') await new Promise<void>((r) => (release = r));
      }
    }
    const handler = new SlowHandler({});
    const { call, recognizer, pauses } = setup({ handler, pauseAfterMs: 500 });
    call.start();
    await flush();
    jest.advanceTimersByTime(1000); // a quick turn never pauses
    expect(pauses).toEqual([]);
    recognizer.listener({ kind: 'final', text: 'check my order' });
    await flush();
    jest.advanceTimersByTime(499);
    expect(pauses).toEqual([]);
    jest.advanceTimersByTime(1);
    expect(pauses).toEqual(['pause']);
    release();
    await flush();
    expect(pauses).toEqual(['pause', 'resume']);
  });
});
