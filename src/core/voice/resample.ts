/**
 * Sample-rate conversion for telephone audio: 8 kHz → 16 kHz by linear interpolation (for the
 * 16 kHz ASR model) and any rate → 8 kHz with a windowed-sinc low-pass before interpolation
 * (TTS output at 16 kHz or 22.05 kHz → phone rate).
 */

/** Doubles the sample rate by linear interpolation (8 kHz → 16 kHz). */
export function upsample2x(input: Int16Array): Int16Array {
  const out = new Int16Array(input.length * 2);
  for (let i = 0; i < input.length; i++) {
    const a = input[i] ?? 0;
    const b = input[i + 1] ?? a;
    out[2 * i] = a;
    out[2 * i + 1] = (a + b) >> 1;
  }
  return out;
}

/** Low-pass FIR taps (Hamming-windowed sinc), cutoff as a fraction of the input rate. */
function lowPassTaps(cutoff: number, taps: number): Float64Array {
  const h = new Float64Array(taps);
  const mid = (taps - 1) / 2;
  let sum = 0;
  for (let i = 0; i < taps; i++) {
    const x = i - mid;
    const sinc = x === 0 ? 2 * cutoff : Math.sin(2 * Math.PI * cutoff * x) / (Math.PI * x);
    const window = 0.54 - 0.46 * Math.cos((2 * Math.PI * i) / (taps - 1));
    h[i] = sinc * window;
    sum += h[i] ?? 0;
  }
  for (let i = 0; i < taps; i++) h[i] = (h[i] ?? 0) / sum;
  return h;
}

/** Converts 16-bit samples from `fromRate` to `toRate` (downsampling is low-pass filtered). */
export function resample(input: Int16Array, fromRate: number, toRate: number): Int16Array {
  if (fromRate === toRate) return input;
  let source: Float64Array;
  if (toRate < fromRate) {
    const taps = lowPassTaps((0.45 * toRate) / fromRate, 31);
    const mid = (taps.length - 1) / 2;
    source = new Float64Array(input.length);
    for (let i = 0; i < input.length; i++) {
      let acc = 0;
      for (let k = 0; k < taps.length; k++) {
        const j = i + k - mid;
        if (j >= 0 && j < input.length) acc += (taps[k] ?? 0) * (input[j] ?? 0);
      }
      source[i] = acc;
    }
  } else {
    source = Float64Array.from(input);
  }
  const outLength = Math.floor((input.length * toRate) / fromRate);
  const out = new Int16Array(outLength);
  const step = fromRate / toRate;
  for (let i = 0; i < outLength; i++) {
    const pos = i * step;
    const j = Math.floor(pos);
    const frac = pos - j;
    const a = source[j] ?? 0;
    const b = source[j + 1] ?? a;
    out[i] = Math.max(-32768, Math.min(32767, Math.round(a + (b - a) * frac)));
  }
  return out;
}
