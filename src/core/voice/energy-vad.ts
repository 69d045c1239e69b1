/**
 * Energy voice-activity detection on µ-law audio in 100 ms blocks (800 bytes at 8 kHz): a block is
 * voiced when its mean absolute amplitude exceeds `threshold`; speech starts after `startBlocks`
 * voiced blocks and ends after `endBlocks` unvoiced ones. Used to notice a caller speaking
 * (silence timer, barge-in) independently of the recogniser.
 */
import { mulawDecode } from 'src/core/voice/mulaw';

export type VadEvent = 'speech_start' | 'speech_end';

export class EnergyVad {
  private pending = new Uint8Array(0);
  private voicedRun = 0;
  private silentRun = 0;
  private speaking = false;

  constructor(
    private readonly threshold = 500,
    private readonly startBlocks = 2,
    private readonly endBlocks = 5,
    private readonly blockBytes = 800,
  ) {}

  get isSpeaking(): boolean {
    return this.speaking;
  }

  /** Feeds µ-law bytes; returns the transitions they caused. */
  push(audio: Uint8Array): VadEvent[] {
    const events: VadEvent[] = [];
    const data = this.pending.length === 0 ? audio : Buffer.concat([this.pending, audio]);
    let offset = 0;
    for (; offset + this.blockBytes <= data.length; offset += this.blockBytes) {
      const samples = mulawDecode(data.subarray(offset, offset + this.blockBytes));
      let sum = 0;
      for (const s of samples) sum += Math.abs(s);
      const voiced = sum / samples.length > this.threshold;
      if (voiced) {
        this.voicedRun++;
        this.silentRun = 0;
        if (!this.speaking && this.voicedRun >= this.startBlocks) {
          this.speaking = true;
          events.push('speech_start');
        }
      } else {
        this.silentRun++;
        this.voicedRun = 0;
        if (this.speaking && this.silentRun >= this.endBlocks) {
          this.speaking = false;
          events.push('speech_end');
        }
      }
    }
    this.pending = Uint8Array.from(data.subarray(offset));
    return events;
  }
}
