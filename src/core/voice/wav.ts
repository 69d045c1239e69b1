/** A decoded PCM WAV: 16-bit mono samples and their rate. */
export interface PcmAudio {
  readonly sampleRate: number;
  readonly samples: Int16Array;
}

/**
 * Reads a 16-bit PCM WAV as written by flite / espeak-ng to a pipe. Chunk sizes written to a pipe
 * are placeholders, so the `data` chunk is taken to run to the end of the buffer.
 */
export function parseWav(buffer: Uint8Array): PcmAudio {
  const view = Buffer.from(buffer.buffer, buffer.byteOffset, buffer.byteLength);
  if (
    view.length < 12 ||
    view.toString('ascii', 0, 4) !== 'RIFF' ||
    view.toString('ascii', 8, 12) !== 'WAVE'
  ) {
    throw new Error('not a RIFF/WAVE stream');
  }
  let offset = 12;
  let sampleRate = 0;
  let channels = 1;
  let bits = 16;
  while (offset + 8 <= view.length) {
    const id = view.toString('ascii', offset, offset + 4);
    const size = view.readUInt32LE(offset + 4);
    const body = offset + 8;
    if (id === 'fmt ') {
      channels = view.readUInt16LE(body + 2);
      sampleRate = view.readUInt32LE(body + 4);
      bits = view.readUInt16LE(body + 14);
    } else if (id === 'data') {
      if (bits !== 16 || channels !== 1 || sampleRate === 0) {
        throw new Error(
          `unsupported WAV format: ${channels} channel(s), ${bits} bits, ${sampleRate} Hz`,
        );
      }
      const end = view.length - ((view.length - body) % 2);
      const samples = new Int16Array((end - body) / 2);
      for (let i = 0; i < samples.length; i++) samples[i] = view.readInt16LE(body + 2 * i);
      return { sampleRate, samples };
    }
    offset = body + size + (size % 2);
  }
  throw new Error('WAV stream has no data chunk');
}

/** A 16-bit mono PCM WAV file (44-byte header) holding `samples` at `sampleRate`. */
export function encodeWav(samples: Int16Array, sampleRate: number): Uint8Array {
  const out = Buffer.alloc(44 + samples.length * 2);
  out.write('RIFF', 0, 'ascii');
  out.writeUInt32LE(36 + samples.length * 2, 4);
  out.write('WAVE', 8, 'ascii');
  out.write('fmt ', 12, 'ascii');
  out.writeUInt32LE(16, 16);
  out.writeUInt16LE(1, 20);
  out.writeUInt16LE(1, 22);
  out.writeUInt32LE(sampleRate, 24);
  out.writeUInt32LE(sampleRate * 2, 28);
  out.writeUInt16LE(2, 32);
  out.writeUInt16LE(16, 34);
  out.write('data', 36, 'ascii');
  out.writeUInt32LE(samples.length * 2, 40);
  for (let i = 0; i < samples.length; i++) out.writeInt16LE(samples[i] ?? 0, 44 + 2 * i);
  return out;
}
