/**
 * G.711 µ-law codec (ITU-T G.711, 8-bit, 14-bit linear range scaled to 16-bit PCM).
 * Silence is the byte 0xFF; 0x00 is the loudest negative value and must never be used as silence.
 */
export const MULAW_SILENCE = 0xff;

const BIAS = 0x84;
const CLIP = 32635;

const DECODE_TABLE: Int16Array = (() => {
  const table = new Int16Array(256);
  for (let i = 0; i < 256; i++) {
    const u = ~i & 0xff;
    const sign = u & 0x80;
    const exponent = (u >> 4) & 0x07;
    const mantissa = u & 0x0f;
    let sample = ((mantissa << 3) + BIAS) << exponent;
    sample -= BIAS;
    table[i] = sign !== 0 ? -sample : sample;
  }
  return table;
})();

function encodeSample(pcm: number): number {
  let sample = Math.max(-32768, Math.min(32767, Math.round(pcm)));
  const sign = sample < 0 ? 0x80 : 0;
  if (sign !== 0) sample = -sample;
  if (sample > CLIP) sample = CLIP;
  sample += BIAS;
  let exponent = 7;
  for (let mask = 0x4000; (sample & mask) === 0 && exponent > 0; mask >>= 1) exponent--;
  const mantissa = (sample >> (exponent + 3)) & 0x0f;
  return ~(sign | (exponent << 4) | mantissa) & 0xff;
}

/** µ-law bytes → 16-bit linear samples. */
export function mulawDecode(bytes: Uint8Array): Int16Array {
  const out = new Int16Array(bytes.length);
  for (let i = 0; i < bytes.length; i++) out[i] = DECODE_TABLE[bytes[i] ?? MULAW_SILENCE] ?? 0;
  return out;
}

/** 16-bit linear samples → µ-law bytes. */
export function mulawEncode(samples: Int16Array): Uint8Array {
  const out = new Uint8Array(samples.length);
  for (let i = 0; i < samples.length; i++) out[i] = encodeSample(samples[i] ?? 0);
  return out;
}

/** `durationMs` of µ-law silence at 8 kHz (0xFF bytes). */
export function mulawSilence(durationMs: number): Uint8Array {
  return new Uint8Array(Math.round((durationMs * 8000) / 1000)).fill(MULAW_SILENCE);
}
