/**
 * Splits one utterance's synthesized µ-law audio into outbound binary messages: audio is buffered
 * and released when the buffer holds more than `flushBytes` (32 KB) or when synthesis of the
 * utterance is complete; no message is larger than `maxMessageBytes` (64,000). Each utterance
 * has its own buffer, so consecutive utterances never share a message.
 */
export const MAX_BINARY_MESSAGE_BYTES = 64_000;
export const FLUSH_THRESHOLD_BYTES = 32_000;

export class UtteranceBuffer {
  private chunks: Uint8Array[] = [];
  private size = 0;

  constructor(
    private readonly flushBytes = FLUSH_THRESHOLD_BYTES,
    private readonly maxMessageBytes = MAX_BINARY_MESSAGE_BYTES,
  ) {}

  /** Adds synthesized audio; returns the messages ready to send. */
  push(audio: Uint8Array): Uint8Array[] {
    if (audio.length === 0) return [];
    this.chunks.push(audio);
    this.size += audio.length;
    if (this.size <= this.flushBytes) return [];
    return this.drain();
  }

  /** Synthesis complete: everything left, split to the maximum message size. */
  end(): Uint8Array[] {
    return this.drain();
  }

  private drain(): Uint8Array[] {
    if (this.size === 0) return [];
    const all = Buffer.concat(this.chunks, this.size);
    this.chunks = [];
    this.size = 0;
    const out: Uint8Array[] = [];
    for (let offset = 0; offset < all.length; offset += this.maxMessageBytes) {
      out.push(all.subarray(offset, Math.min(all.length, offset + this.maxMessageBytes)));
    }
    return out;
  }
}
