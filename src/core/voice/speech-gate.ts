/**
 * Speech gate: decides which stretches of caller audio are speech worth recognising, on µ-law
 * 8 kHz audio in 20 ms frames.
 *
 * - A frame is *active* when its level is `marginDb` above a noise floor that follows the line
 *   (falls quickly, rises slowly, frozen while the caller speaks) and above `minLevelDb`.
 * - A frame is *voiced* when it is active and periodic in the pitch range (normalised
 *   autocorrelation ≥ `periodicity` at a lag of 2.5–16 ms): vowels are, breathing, coughs, clicks
 *   and line noise are not.
 * - `startFrames` active frames in a row open a candidate; it becomes speech once it holds
 *   `minVoicedMs` of voiced frames. A candidate that ends (or runs `maxCandidateMs`) without
 *   enough voicing is dropped: it never reaches the recogniser and produces no turn.
 * - When speech is confirmed, the `preRollMs` before the candidate plus the candidate itself are
 *   released at once, so the first phoneme (often unvoiced: the h of "hello") is kept; from then
 *   on audio passes through until `hangoverMs` without an active frame (the hangover is passed
 *   too), or `maxSpeechMs`.
 */
import { mulawDecode } from 'src/core/voice/mulaw';

export interface SpeechGateOptions {
  /** Audio kept before the start of speech and released with it. */
  readonly preRollMs: number;
  /** Inactive audio that ends speech (passed through with the speech). */
  readonly hangoverMs: number;
  /** Level above the noise floor that makes a frame active. */
  readonly marginDb: number;
  /** Absolute level a frame needs to be active (dB of RMS in 16-bit units; 40 dB = RMS 100). */
  readonly minLevelDb: number;
  /** Consecutive active frames that open a candidate. */
  readonly startFrames: number;
  /** Voiced audio a candidate needs to count as speech. */
  readonly minVoicedMs: number;
  /** Normalised autocorrelation a frame needs to count as voiced (0–1). */
  readonly periodicity: number;
  /** A candidate without enough voicing is dropped after this long. */
  readonly maxCandidateMs: number;
  /** Speech longer than this is ended (and the gate starts over). */
  readonly maxSpeechMs: number;
  /** How fast the noise floor may rise while nobody speaks (dB per second). */
  readonly floorRiseDbPerSecond: number;
}

export const DEFAULT_SPEECH_GATE_OPTIONS: SpeechGateOptions = {
  preRollMs: 300,
  hangoverMs: 300,
  marginDb: 12,
  minLevelDb: 40,
  startFrames: 2,
  minVoicedMs: 80,
  periodicity: 0.55,
  maxCandidateMs: 1500,
  maxSpeechMs: 15_000,
  floorRiseDbPerSecond: 4,
};

export type SpeechGateEvent =
  /** Speech confirmed; audio follows. */
  | { readonly type: 'speech_start' }
  /** Audio for the recogniser (pre-roll, speech, hangover), in order. */
  | { readonly type: 'audio'; readonly audio: Uint8Array }
  /** Speech ended; `endMs` is the stream position where the last active frame ended. */
  | { readonly type: 'speech_end'; readonly endMs: number }
  /** A candidate was dropped (noise, breath, cough); `ms` is its length. */
  | { readonly type: 'rejected'; readonly ms: number };

const SAMPLE_RATE = 8000;
const FRAME_SAMPLES = 160; // 20 ms
const FRAME_MS = 20;
const MIN_LAG = 20; // 400 Hz
const MAX_LAG = 128; // 62.5 Hz

type State = 'idle' | 'candidate' | 'speech';

export class SpeechGate {
  readonly options: SpeechGateOptions;
  private pending = new Uint8Array(0);
  private state: State = 'idle';
  private floorDb: number | null = null;
  private frames = 0;
  private activeRun = 0;
  private inactiveRun = 0;
  private voicedFrames = 0;
  private candidateFrames = 0;
  private speechFrames = 0;
  private lastActiveEndFrame = 0;
  /** Frames before the candidate (up to the pre-roll). */
  private preRoll: Uint8Array[] = [];
  /** Frames of the open candidate. */
  private candidate: Uint8Array[] = [];
  private previous: Int16Array = new Int16Array(FRAME_SAMPLES);

  constructor(options: Partial<SpeechGateOptions> = {}) {
    this.options = { ...DEFAULT_SPEECH_GATE_OPTIONS, ...options };
  }

  get isSpeaking(): boolean {
    return this.state === 'speech';
  }

  /** Stream position (ms of audio pushed, whole frames). */
  get positionMs(): number {
    return this.frames * FRAME_MS;
  }

  /** Current noise floor estimate in dB (null before the first frame). */
  get noiseFloorDb(): number | null {
    return this.floorDb;
  }

  /** Feeds µ-law bytes; returns what they caused, in order. */
  push(audio: Uint8Array): SpeechGateEvent[] {
    const events: SpeechGateEvent[] = [];
    const data = this.pending.length === 0 ? audio : concat([this.pending, audio]);
    let offset = 0;
    for (; offset + FRAME_SAMPLES <= data.length; offset += FRAME_SAMPLES) {
      this.frame(data.slice(offset, offset + FRAME_SAMPLES), events);
    }
    this.pending = data.slice(offset);
    return mergeAudio(events);
  }

  /** Ends open speech (the caller hung up or the stream paused). */
  flush(): SpeechGateEvent[] {
    const events: SpeechGateEvent[] = [];
    if (this.state === 'speech') this.endSpeech(events);
    else if (this.state === 'candidate') this.reject(events);
    return events;
  }

  private frame(bytes: Uint8Array, events: SpeechGateEvent[]): void {
    const o = this.options;
    const samples = mulawDecode(bytes);
    this.frames++;
    let energy = 0;
    for (const s of samples) energy += s * s;
    const levelDb = 10 * Math.log10(energy / samples.length + 1);
    const floor = this.floorDb ?? levelDb;
    const active = levelDb >= floor + o.marginDb && levelDb >= o.minLevelDb;
    const voiced = active && periodicity(this.previous, samples) >= o.periodicity;
    this.previous = samples;
    if (this.state !== 'speech') this.updateFloor(levelDb);
    if (active) {
      this.activeRun++;
      this.inactiveRun = 0;
      this.lastActiveEndFrame = this.frames;
    } else {
      this.activeRun = 0;
      this.inactiveRun++;
    }
    const hangoverFrames = Math.max(1, Math.round(o.hangoverMs / FRAME_MS));
    switch (this.state) {
      case 'idle': {
        this.preRoll.push(bytes);
        if (this.activeRun >= o.startFrames) {
          // the active run itself opens the candidate
          this.candidate = this.preRoll.splice(this.preRoll.length - this.activeRun);
          this.candidateFrames = this.candidate.length;
          this.voicedFrames = voiced ? 1 : 0;
          this.state = 'candidate';
        }
        this.trimPreRoll();
        break;
      }
      case 'candidate': {
        this.candidate.push(bytes);
        this.candidateFrames++;
        if (voiced) this.voicedFrames++;
        if (this.voicedFrames * FRAME_MS >= o.minVoicedMs) {
          this.state = 'speech';
          this.speechFrames = this.candidateFrames;
          events.push({ type: 'speech_start' });
          for (const f of [...this.preRoll, ...this.candidate]) {
            events.push({ type: 'audio', audio: f });
          }
          this.preRoll = [];
          this.candidate = [];
        } else if (
          this.inactiveRun >= hangoverFrames ||
          this.candidateFrames * FRAME_MS >= o.maxCandidateMs
        ) {
          this.reject(events);
        }
        break;
      }
      case 'speech': {
        this.speechFrames++;
        events.push({ type: 'audio', audio: bytes });
        if (this.inactiveRun >= hangoverFrames || this.speechFrames * FRAME_MS >= o.maxSpeechMs) {
          this.endSpeech(events);
        }
        break;
      }
    }
  }

  private reject(events: SpeechGateEvent[]): void {
    events.push({ type: 'rejected', ms: this.candidateFrames * FRAME_MS });
    this.preRoll.push(...this.candidate);
    this.candidate = [];
    this.candidateFrames = 0;
    this.voicedFrames = 0;
    this.activeRun = 0;
    this.state = 'idle';
    this.trimPreRoll();
  }

  private endSpeech(events: SpeechGateEvent[]): void {
    events.push({ type: 'speech_end', endMs: this.lastActiveEndFrame * FRAME_MS });
    this.state = 'idle';
    this.speechFrames = 0;
    this.voicedFrames = 0;
    this.activeRun = 0;
    this.preRoll = [];
  }

  private trimPreRoll(): void {
    const keep = Math.ceil(this.options.preRollMs / FRAME_MS);
    if (this.preRoll.length > keep) this.preRoll.splice(0, this.preRoll.length - keep);
  }

  private updateFloor(levelDb: number): void {
    if (this.floorDb === null) {
      this.floorDb = levelDb;
      return;
    }
    if (levelDb < this.floorDb) {
      this.floorDb += (levelDb - this.floorDb) * 0.3; // falls within a few frames
    } else {
      const rise = (this.options.floorRiseDbPerSecond * FRAME_MS) / 1000;
      this.floorDb += Math.min(levelDb - this.floorDb, rise);
    }
  }
}

/** Largest normalised autocorrelation of the last two frames at a pitch lag (0 for silence). */
export function periodicity(previous: Int16Array, current: Int16Array): number {
  const n = previous.length + current.length;
  const x = new Float64Array(n);
  x.set(previous, 0);
  x.set(current, previous.length);
  let mean = 0;
  for (let i = 0; i < n; i++) mean += x[i] ?? 0;
  mean /= n;
  for (let i = 0; i < n; i++) x[i] = (x[i] ?? 0) - mean;
  let best = 0;
  for (let lag = MIN_LAG; lag <= MAX_LAG; lag++) {
    let xy = 0;
    let xx = 0;
    let yy = 0;
    for (let i = 0; i + lag < n; i++) {
      const a = x[i] ?? 0;
      const b = x[i + lag] ?? 0;
      xy += a * b;
      xx += a * a;
      yy += b * b;
    }
    if (xx <= 0 || yy <= 0) continue;
    const r = xy / Math.sqrt(xx * yy);
    if (r > best) best = r;
  }
  return best;
}

function concat(parts: readonly Uint8Array[]): Uint8Array {
  let length = 0;
  for (const p of parts) length += p.length;
  const out = new Uint8Array(length);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** Joins consecutive audio events into one. */
function mergeAudio(events: SpeechGateEvent[]): SpeechGateEvent[] {
  const out: SpeechGateEvent[] = [];
  let run: Uint8Array[] = [];
  const close = (): void => {
    if (run.length > 0) out.push({ type: 'audio', audio: concat(run) });
    run = [];
  };
  for (const event of events) {
    if (event.type === 'audio') {
      run.push(event.audio);
    } else {
      close();
      out.push(event);
    }
  }
  close();
  return out;
}

export const SPEECH_GATE_SAMPLE_RATE = SAMPLE_RATE;
