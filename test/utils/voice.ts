import { setTimeout as sleep } from 'node:timers/promises';
import { mulawDecode, mulawEncode } from 'src/core';
import request from 'supertest';

/** The texts of the user events of conversation `id`, from GET /conversations/{id}/tracker. */
export async function userTexts(url: string, id: string): Promise<string[]> {
  const body = (await request(url).get(`/conversations/${id}/tracker`).expect(200)).body as {
    events: Array<Record<string, unknown>>;
  };
  return body.events.filter((e) => e.event === 'user').map((e) => String(e.text));
}

/** Polls the tracker of `id` (every `pollMs`, 100 times at most) until a user event says `text`. */
export async function waitForUserText(
  url: string,
  id: string,
  text: string,
  pollMs = 200,
): Promise<void> {
  for (let i = 0; i < 100; i++) {
    if ((await userTexts(url, id)).includes(text)) return;
    await sleep(pollMs);
  }
  throw new Error(`no user message "${text}" in ${JSON.stringify(await userTexts(url, id))}`);
}

/** Deterministic pseudo-random numbers in [0, 1). */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 0x100000000;
  };
}

/**
 * Caller-side line audio (µ-law 8 kHz): `speech` (µ-law, may be empty) over light line noise of
 * `rms` (16-bit units; 120 ≈ a quiet phone line), padded to `durationMs` when longer.
 */
export function onNoisyLine(
  speech: Uint8Array,
  {
    rms = 120,
    durationMs = 0,
    seed = 1,
  }: { rms?: number; durationMs?: number; seed?: number } = {},
): Buffer {
  const length = Math.max(speech.length, Math.round(durationMs * 8));
  const voice = mulawDecode(speech);
  const r = rng(seed);
  const out = new Int16Array(length);
  for (let i = 0; i < length; i++) {
    const noise = (r() + r() + r() + r() - 2) * rms * Math.sqrt(3);
    out[i] = Math.max(-32768, Math.min(32767, Math.round((voice[i] ?? 0) + noise)));
  }
  return Buffer.from(mulawEncode(out));
}

/** Breathing (slow swells of noise) and a cough (a sharp noise burst), over line noise. */
export function breathAndCough(seed = 3): Buffer {
  const r = rng(seed);
  const length = 6 * 8000;
  const out = new Int16Array(length);
  for (let i = 0; i < length; i++) {
    const t = i / 8000;
    let level = 120;
    for (const start of [0.5, 2, 4.5]) {
      if (t >= start && t < start + 0.7) {
        level += 900 * Math.sin((Math.PI * (t - start)) / 0.7) ** 2;
      }
    }
    if (t >= 3.2 && t < 3.45) level += 6000 * Math.exp(-6 * ((t - 3.2) / 0.25));
    out[i] = Math.max(
      -32768,
      Math.min(32767, Math.round((r() + r() + r() + r() - 2) * level * Math.sqrt(3))),
    );
  }
  return Buffer.from(mulawEncode(out));
}
