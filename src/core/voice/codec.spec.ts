import { externalChannel, selectMedia } from 'src/core/voice/audiohook-protocol';
import { EnergyVad } from 'src/core/voice/energy-vad';
import { MULAW_SILENCE, mulawDecode, mulawEncode, mulawSilence } from 'src/core/voice/mulaw';
import { NonceCache } from 'src/core/voice/nonce-cache';
import { UtteranceBuffer } from 'src/core/voice/outbound-audio';
import { resample, upsample2x } from 'src/core/voice/resample';
import { TokenBucket } from 'src/core/voice/token-bucket';

function tone(hz: number, rate: number, ms: number, amplitude = 8000): Int16Array {
  const n = Math.round((rate * ms) / 1000);
  return Int16Array.from({ length: n }, (_, i) =>
    Math.round(amplitude * Math.sin((2 * Math.PI * hz * i) / rate)),
  );
}

describe('µ-law codec', () => {
  it('uses 0xFF as silence, which decodes to zero, and 0x00 as the loudest negative value', () => {
    expect(MULAW_SILENCE).toBe(0xff);
    expect(mulawDecode(Uint8Array.of(0xff))[0]).toBe(0);
    expect(mulawDecode(Uint8Array.of(0x00))[0]).toBe(-32124);
    expect([...mulawSilence(10)]).toEqual(new Array(80).fill(0xff));
    expect(mulawEncode(Int16Array.of(0))[0]).toBe(0xff);
  });

  it('round-trips every code exactly and samples within the quantisation step', () => {
    const codes = Uint8Array.from({ length: 256 }, (_, i) => i);
    const back = mulawEncode(mulawDecode(codes));
    for (let i = 0; i < 256; i++) {
      // 0x7F and 0xFF are both zero; zero encodes to 0xFF
      expect(back[i]).toBe(i === 0x7f ? 0xff : i);
    }
    const samples = tone(440, 8000, 20);
    const decoded = mulawDecode(mulawEncode(samples));
    samples.forEach((s, i) =>
      expect(Math.abs((decoded[i] ?? 0) - s)).toBeLessThanOrEqual(Math.abs(s) / 16 + 8),
    );
  });
});

describe('resampling', () => {
  it('doubles 8 kHz to 16 kHz and brings 16 kHz / 22.05 kHz down to 8 kHz keeping the tone', () => {
    expect(upsample2x(Int16Array.of(0, 100, 200)).length).toBe(6);
    expect([...upsample2x(Int16Array.of(0, 100))]).toEqual([0, 50, 100, 100]);
    for (const rate of [16000, 22050]) {
      const out = resample(tone(440, rate, 100), rate, 8000);
      expect(out.length).toBe(800);
      const peak = Math.max(...out.slice(100, 700).map(Math.abs));
      expect(peak).toBeGreaterThan(7000);
      expect(peak).toBeLessThan(8800);
    }
  });

  it('filters content above the new Nyquist frequency out', () => {
    const out = resample(tone(6000, 16000, 100), 16000, 8000);
    expect(Math.max(...out.slice(100, 700).map(Math.abs))).toBeLessThan(1200);
  });
});

describe(UtteranceBuffer.name, () => {
  it('holds audio until more than 32 KB are buffered, then releases messages of at most 64,000 bytes', () => {
    const buffer = new UtteranceBuffer();
    expect(buffer.push(new Uint8Array(20_000))).toEqual([]);
    expect(buffer.push(new Uint8Array(12_000))).toEqual([]);
    const out = buffer.push(new Uint8Array(100_000));
    expect(out.map((m) => m.length)).toEqual([64_000, 64_000, 4_000]);
    expect(buffer.end()).toEqual([]);
  });

  it('releases the rest when synthesis is complete', () => {
    const buffer = new UtteranceBuffer();
    expect(buffer.push(new Uint8Array(1000).fill(7))).toEqual([]);
    const [rest] = buffer.end();
    expect(rest?.length).toBe(1000);
    expect(rest?.[0]).toBe(7);
  });
});

describe(TokenBucket.name, () => {
  it('allows a burst of 25, then 5 per second, and holds after a block', () => {
    let now = 0;
    const bucket = new TokenBucket(5, 25, () => now);
    let sent = 0;
    while (bucket.tryTake()) sent++;
    expect(sent).toBe(25);
    expect(bucket.waitMs()).toBe(200);
    now += 1000;
    sent = 0;
    while (bucket.tryTake()) sent++;
    expect(sent).toBe(5);
    bucket.block(2000);
    now += 2000;
    expect(bucket.tryTake()).toBe(false);
    now += 200;
    expect(bucket.tryTake()).toBe(true);
  });
});

describe(NonceCache.name, () => {
  it('refuses a nonce seen before it expired and forgets it afterwards', () => {
    const cache = new NonceCache();
    expect(cache.remember('n1', 110, 100)).toBe(true);
    expect(cache.remember('n1', 120, 105)).toBe(false);
    expect(cache.remember('n1', 130, 111)).toBe(true);
  });

  it('stays bounded', () => {
    const cache = new NonceCache(2);
    cache.remember('a', 10, 0);
    cache.remember('b', 20, 0);
    cache.remember('c', 30, 0);
    expect(cache.size).toBe(2);
  });
});

describe(EnergyVad.name, () => {
  it('reports speech start after loud blocks and speech end after silence', () => {
    const vad = new EnergyVad();
    expect(vad.push(mulawSilence(300))).toEqual([]);
    expect(vad.push(mulawEncode(tone(300, 8000, 300)))).toEqual(['speech_start']);
    expect(vad.push(mulawSilence(600))).toEqual(['speech_end']);
  });
});

describe('media negotiation', () => {
  it('picks the first PCMU 8 kHz offer with the external channel', () => {
    expect(
      selectMedia([
        { type: 'audio', format: 'L16', channels: ['external'], rate: 8000 },
        { type: 'audio', format: 'PCMU', channels: ['internal'], rate: 8000 },
        { type: 'audio', format: 'PCMU', channels: ['external', 'internal'], rate: 8000 },
      ]),
    ).toEqual({ type: 'audio', format: 'PCMU', channels: ['external', 'internal'], rate: 8000 });
    expect(
      selectMedia([{ type: 'audio', format: 'PCMU', channels: ['external'], rate: 16000 }]),
    ).toBeNull();
    expect(selectMedia(['x', null, 3])).toBeNull();
  });

  it('de-interleaves the external channel of a stereo frame', () => {
    const media = {
      type: 'audio',
      format: 'PCMU',
      channels: ['internal', 'external'],
      rate: 8000,
    } as const;
    expect([...externalChannel(Uint8Array.of(1, 2, 3, 4, 5, 6), media)]).toEqual([2, 4, 6]);
  });
});
