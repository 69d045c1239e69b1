import { buildJsgf } from 'src/core/voice/jsgf-grammar';
import { mulawEncode } from 'src/core/voice/mulaw';
import { SpeechGate, type SpeechGateEvent } from 'src/core/voice/speech-gate';
import { TranscriptFilter } from 'src/core/voice/transcript-filter';
import { parseVoiceConnectorConfig } from 'src/core/voice/voice-config';

// Synthetic telephone audio at 8 kHz (16-bit PCM, µ-law encoded before the gate).
const RATE = 8000;
const ms = (n: number): number => Math.round((n * RATE) / 1000);

/** Deterministic pseudo-random generator (tests must not depend on luck). */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 0x100000000;
  };
}

/** Roughly Gaussian noise of the given RMS. */
function noise(durationMs: number, rms: number, seed = 1): Float64Array {
  const r = rng(seed);
  const out = new Float64Array(ms(durationMs));
  for (let i = 0; i < out.length; i++) {
    out[i] = (r() + r() + r() + r() - 2) * rms * Math.sqrt(3);
  }
  return out;
}

/** A vowel: a 120 Hz harmonic series (10 harmonics) of the given RMS. */
function vowel(durationMs: number, rms: number, f0 = 120): Float64Array {
  const out = new Float64Array(ms(durationMs));
  let power = 0;
  for (let h = 1; h <= 10; h++) power += 1 / (h * h) / 2;
  const gain = rms / Math.sqrt(power);
  for (let i = 0; i < out.length; i++) {
    let v = 0;
    for (let h = 1; h <= 10; h++) v += Math.sin((2 * Math.PI * f0 * h * i) / RATE) / h;
    // 10 ms fade in and out
    const edge = Math.min(1, i / ms(10), (out.length - i) / ms(10));
    out[i] = v * gain * edge;
  }
  return out;
}

function envelope(signal: Float64Array, shape: (t: number) => number): Float64Array {
  return signal.map((v, i) => v * shape(i / signal.length));
}

/** Sums signals (the first sets the length; the others start at their offsets). */
function mix(base: Float64Array, ...parts: Array<[Float64Array, number]>): Float64Array {
  const out = Float64Array.from(base);
  for (const [part, atMs] of parts) {
    const at = ms(atMs);
    for (let i = 0; i < part.length && at + i < out.length; i++) {
      out[at + i] = (out[at + i] ?? 0) + (part[i] ?? 0);
    }
  }
  return out;
}

function toMulaw(signal: Float64Array): Uint8Array {
  return mulawEncode(
    Int16Array.from(signal, (v) => Math.max(-32768, Math.min(32767, Math.round(v)))),
  );
}

/** Feeds the audio in 200 ms frames (as Genesys sends it). */
function run(gate: SpeechGate, audio: Uint8Array): SpeechGateEvent[] {
  const events: SpeechGateEvent[] = [];
  for (let at = 0; at < audio.length; at += 1600) {
    events.push(...gate.push(audio.subarray(at, at + 1600)));
  }
  return events;
}

const starts = (events: SpeechGateEvent[]): number =>
  events.filter((e) => e.type === 'speech_start').length;
const released = (events: SpeechGateEvent[]): Buffer =>
  Buffer.concat(events.flatMap((e) => (e.type === 'audio' ? [e.audio] : [])));

/**
 * "hello"-like: 120 ms of faint aspiration (the h, below the gate's threshold on this line) then
 * 350 ms of voicing.
 */
function word(): Float64Array {
  return mix(new Float64Array(ms(470)), [noise(120, 250, 9), 0], [vowel(350, 3000), 120]);
}

describe('SpeechGate', () => {
  it('lets nothing through from digital silence or steady line noise', () => {
    const gate = new SpeechGate();
    const events = run(gate, toMulaw(mix(new Float64Array(ms(30_000)), [noise(30_000, 150), 0])));
    expect(starts(events)).toBe(0);
    expect(released(events).length).toBe(0);
    expect(run(new SpeechGate(), new Uint8Array(ms(5000)).fill(0xff))).toEqual([]);
  });

  it('drops breathing and a cough on a noisy line', () => {
    const line = noise(12_000, 120, 2);
    const breath = (seed: number): Float64Array =>
      envelope(noise(700, 900, seed), (t) => Math.sin(Math.PI * t) ** 2);
    const cough = envelope(noise(250, 6000, 7), (t) => (t < 0.05 ? t / 0.05 : Math.exp(-6 * t)));
    const audio = mix(
      line,
      [breath(3), 1000],
      [breath(4), 3000],
      [breath(5), 5000],
      [cough, 7000],
      [breath(6), 9000],
    );
    const events = run(new SpeechGate(), toMulaw(audio));
    expect(starts(events)).toBe(0);
    expect(released(events).length).toBe(0);
    expect(events.filter((e) => e.type === 'rejected').length).toBeGreaterThanOrEqual(1);
  });

  it('releases the pre-roll with the speech, so the unvoiced first phoneme reaches the recogniser', () => {
    const gate = new SpeechGate({ preRollMs: 300, hangoverMs: 300 });
    const onsetMs = 2000;
    const audio = toMulaw(mix(noise(4000, 100, 11), [word(), onsetMs]));
    const events = run(gate, audio);
    expect(events.map((e) => e.type).filter((t) => t !== 'audio')).toEqual([
      'speech_start',
      'speech_end',
    ]);
    const out = released(events);
    // the released audio is one contiguous stretch of the input...
    const start = Buffer.from(audio).indexOf(out.subarray(0, 160));
    expect(start).toBeGreaterThanOrEqual(0);
    expect(
      Buffer.from(audio)
        .subarray(start, start + out.length)
        .equals(out),
    ).toBe(true);
    // ...starting before the aspiration, at most the pre-roll (plus a frame) earlier
    expect(start).toBeLessThanOrEqual(ms(onsetMs));
    expect(start).toBeGreaterThanOrEqual(ms(onsetMs - 300 - 20));
    // ...and running through the word and the hangover
    expect(start + out.length).toBeGreaterThanOrEqual(ms(onsetMs + 470 + 280));
    const end = events.find((e) => e.type === 'speech_end');
    expect(end?.type === 'speech_end' && end.endMs).toBeGreaterThanOrEqual(onsetMs + 440);
    expect(end?.type === 'speech_end' && end.endMs).toBeLessThanOrEqual(onsetMs + 500);
  });

  it('keeps two words with a short pause in one utterance and ends after the hangover', () => {
    const audio = toMulaw(
      mix(noise(5000, 100, 12), [word(), 1000], [word(), 1600], [word(), 3500]),
    );
    const events = run(new SpeechGate({ hangoverMs: 300 }), audio);
    expect(starts(events)).toBe(2);
    expect(events.filter((e) => e.type === 'speech_end').length).toBe(2);
  });

  it('adapts to a line that gets noisier and still hears speech above it', () => {
    const quiet = noise(3000, 40, 13);
    const loud = noise(8000, 500, 14);
    const audio = new Float64Array(quiet.length + loud.length);
    audio.set(quiet, 0);
    audio.set(loud, quiet.length);
    const events = run(new SpeechGate(), toMulaw(mix(audio, [word(), 9000])));
    expect(starts(events)).toBe(1);
    const start = events.findIndex((e) => e.type === 'speech_start');
    // the step in noise at 3 s produced no speech: the only start is the word's
    expect(events.slice(0, start).some((e) => e.type === 'audio')).toBe(false);
  });

  it('flush ends open speech', () => {
    const gate = new SpeechGate();
    const events = run(gate, toMulaw(mix(noise(1500, 100, 15), [vowel(1000, 3000), 500])));
    expect(starts(events)).toBe(1);
    expect(gate.isSpeaking).toBe(true);
    expect(gate.flush().map((e) => e.type)).toEqual(['speech_end']);
  });
});

describe('TranscriptFilter', () => {
  const filter = new TranscriptFilter({ fillers: ['oh', 'uh', 'um', 'hmm'], minConfidence: 0.5 });

  it('drops empty, filler-only and low-confidence results', () => {
    expect(filter.judge('')).toEqual({ accepted: false, reason: 'empty' });
    expect(filter.judge('<sil> [NOISE]')).toEqual({ accepted: false, reason: 'empty' });
    expect(filter.judge('oh')).toEqual({ accepted: false, reason: 'filler' });
    expect(filter.judge('Uh, um... hmm')).toEqual({ accepted: false, reason: 'filler' });
    expect(filter.judge('i am sad', 0.3)).toEqual({ accepted: false, reason: 'low_confidence' });
  });

  it('keeps real words, with fillers around them or without a confidence', () => {
    expect(filter.judge(' oh hello ')).toEqual({ accepted: true, text: 'oh hello' });
    expect(filter.judge('i am sad', 0.9)).toEqual({ accepted: true, text: 'i am sad' });
    expect(filter.judge('yes')).toEqual({ accepted: true, text: 'yes' });
  });
});

describe('buildJsgf digits', () => {
  const all = (): boolean => true;
  it('adds the digit loop only when the examples speak of numbers (auto), or when asked', () => {
    expect(buildJsgf(['hello', 'i am sad'], all)).not.toContain('<digit>');
    expect(buildJsgf(['my number is five five five', 'hello'], all)).toContain('<digit>+');
    expect(buildJsgf(['hello'], all, true)).toContain('<digit>+');
    expect(buildJsgf(['call 911'], all, false)).not.toContain('<digit>');
  });
});

describe('voice settings for the gate, the filter and pauses', () => {
  const base = {
    api_key: 'k',
    server_url: 'localhost',
    asr: { name: 'pocketsphinx' },
    tts: { name: 'flite' },
  };

  it('reads vad, transcripts and pause_audio_after, with defaults when absent', () => {
    const plain = parseVoiceConnectorConfig(base, 'genesys');
    expect(plain.speechGate).toEqual({});
    expect(plain.transcripts.minConfidence).toBe(0.4);
    expect(plain.transcripts.fillers).toContain('oh');
    expect(plain.pauseAudioAfter).toBeNull();
    const tuned = parseVoiceConnectorConfig(
      {
        ...base,
        vad: { pre_roll_ms: 400, hangover_ms: 250 },
        transcripts: { fillers: ['uh'], min_confidence: 0.6 },
        pause_audio_after: 2,
      },
      'genesys',
    );
    expect(tuned.speechGate).toEqual({ preRollMs: 400, hangoverMs: 250 });
    expect(tuned.transcripts).toEqual({ fillers: ['uh'], minConfidence: 0.6 });
    expect(tuned.pauseAudioAfter).toBe(2);
  });

  it('names the key of a wrong setting', () => {
    const parse = (extra: Record<string, unknown>) => () =>
      parseVoiceConnectorConfig({ ...base, ...extra }, 'genesys');
    expect(parse({ vad: { preroll: 1 } })).toThrow('genesys.vad.preroll: unknown key');
    expect(parse({ vad: { hangover_ms: -1 } })).toThrow('genesys.vad.hangover_ms');
    expect(parse({ transcripts: { min_confidence: 2 } })).toThrow(
      'genesys.transcripts.min_confidence',
    );
    expect(parse({ pause_audio_after: 0 })).toThrow('genesys.pause_audio_after');
  });
});
