'use strict';
/* global performance, Buffer -- Node globals missing from the repo's eslint JS globals */
// Helpers of the voice benches: the server's own CPU and memory (not the launcher's), an
// AudioHook caller that streams µ-law audio in real time, caller audio on a noisy line, the end
// of speech inside that audio, and the server's voice metrics.
const { randomUUID } = require('node:crypto');
const path = require('node:path');
const { setTimeout: sleep } = require('node:timers/promises');
const WebSocket = require('ws');
const { mkdirSync, readFileSync, readdirSync, writeFileSync } = require('node:fs');
const { createScratchDatabase } = require('../lib/http-bench');
const { ROOT, moodbotFiles, startParley, trainParley } = require('../lib/parley');

const core = () => require(path.join(ROOT, 'dist', 'core'));
const TICK = 100; // clock ticks per second (/proc stat times)

function stat(pid) {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const comm = text.slice(text.indexOf('(') + 1, text.lastIndexOf(')'));
    const f = text.slice(text.lastIndexOf(')') + 2).split(' ');
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    return {
      comm,
      ppid: Number(f[1]),
      own: (Number(f[11]) + Number(f[12])) / TICK, // utime + stime
      reaped: (Number(f[13]) + Number(f[14])) / TICK, // cutime + cstime: children that exited
      rss: Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) * 1024,
    };
  } catch {
    return null;
  }
}

function childrenOf(pid) {
  const out = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const s = stat(entry);
    if (s !== null && s.ppid === pid) out.push(Number(entry));
  }
  return out;
}

/**
 * CPU seconds of the serving process (not the `parley run` launcher) and of its engine children
 * (live ones plus those already reaped), its RSS, and the RSS of its pocketsphinx processes.
 */
function serverUsage(pid) {
  const server = stat(pid);
  if (server === null) return { cpu: 0, rss: 0, asrRss: 0, asrProcesses: 0 };
  let cpu = server.own + server.reaped;
  let asrRss = 0;
  let asrProcesses = 0;
  for (const child of childrenOf(pid)) {
    const s = stat(child);
    if (s === null) continue;
    cpu += s.own + s.reaped;
    if (s.comm.startsWith('pocketsphinx')) {
      asrRss += s.rss;
      asrProcesses++;
    }
  }
  return { cpu, rss: server.rss, asrRss, asrProcesses };
}

/** Deterministic pseudo-random numbers in [0, 1). */
function rng(seed) {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 0x100000000;
  };
}

/** µ-law `speech` over light line noise of `rms` (16-bit units), at least `durationMs` long. */
function onNoisyLine(speech, { rms = 120, durationMs = 0, seed = 1 } = {}) {
  const { mulawDecode, mulawEncode } = core();
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

/** 60 s (by default) of a quiet line: silence, line noise, breaths, clicks and coughs. */
function noiseOnly(durationMs = 60_000, seed = 17) {
  const { mulawEncode } = core();
  const r = rng(seed);
  const length = Math.round(durationMs * 8);
  const out = new Int16Array(length);
  for (let i = 0; i < length; i++) {
    const t = i / 8000;
    const second = t % 10;
    let level = t % 20 < 10 ? 120 : 8; // noisy line, then nearly silent, in turns
    if (second >= 2 && second < 2.7) level += 900 * Math.sin((Math.PI * (second - 2)) / 0.7) ** 2;
    if (second >= 5 && second < 5.25) level += 6000 * Math.exp(-6 * ((second - 5) / 0.25));
    if (second >= 7 && second < 7.01) level += 4000; // a click
    out[i] = Math.max(
      -32768,
      Math.min(32767, Math.round((r() + r() + r() + r() - 2) * level * Math.sqrt(3))),
    );
  }
  return Buffer.from(mulawEncode(out));
}

/** Where speech ends in µ-law audio (ms): the end of the last 20 ms frame above `rms`. */
function speechEndMs(audio, rms = 400) {
  const { mulawDecode } = core();
  const pcm = mulawDecode(audio);
  let end = 0;
  for (let at = 0; at + 160 <= pcm.length; at += 160) {
    let sum = 0;
    for (let i = at; i < at + 160; i++) sum += pcm[i] * pcm[i];
    if (Math.sqrt(sum / 160) > rms) end = (at + 160) / 8;
  }
  return end;
}

/** An AudioHook (Audio Connector) caller over a WebSocket. */
class Caller {
  static async connect(wsUrl, apiKey) {
    const sessionId = randomUUID();
    const organizationId = randomUUID();
    const ws = new WebSocket(wsUrl, {
      headers: {
        'audiohook-organization-id': organizationId,
        'audiohook-session-id': sessionId,
        'audiohook-correlation-id': randomUUID(),
        'x-api-key': apiKey,
      },
    });
    await new Promise((resolve, reject) => {
      ws.once('open', resolve);
      ws.once('error', reject);
    });
    return new Caller(ws, sessionId, organizationId);
  }

  constructor(ws, sessionId, organizationId) {
    this.ws = ws;
    this.sessionId = sessionId;
    this.organizationId = organizationId;
    this.conversationId = randomUUID();
    this.seq = 0;
    this.serverseq = 0;
    this.audioTimes = [];
    this.messages = [];
    ws.on('message', (data, isBinary) => {
      if (isBinary) {
        this.audioTimes.push(performance.now());
        return;
      }
      const m = JSON.parse(data.toString());
      this.serverseq = m.seq;
      this.messages.push(m.type);
      if (m.type === 'pause') this.send('paused');
      if (m.type === 'resume') this.send('resumed', { start: 'PT0S', discarded: 'PT0S' });
    });
  }

  send(type, parameters = {}) {
    this.ws.send(
      JSON.stringify({
        version: '2',
        id: this.sessionId,
        type,
        seq: ++this.seq,
        serverseq: this.serverseq,
        position: 'PT0S',
        parameters,
      }),
    );
  }

  open() {
    this.send('open', {
      organizationId: this.organizationId,
      conversationId: this.conversationId,
      participant: { id: randomUUID(), ani: 'tel:+14155550100', aniName: '', dnis: '+18005550199' },
      media: [{ type: 'audio', format: 'PCMU', channels: ['external'], rate: 8000 }],
    });
  }

  /**
   * Streams `audio` in 200 ms frames in real time, each frame sent once it has been "captured"
   * (frame k at start + 200·(k+1) ms, as a phone line delivers it). Returns the start time, so
   * stream position p ms is wall time start + p.
   */
  async stream(audio) {
    const start = performance.now();
    for (let k = 0; k * 1600 < audio.length; k++) {
      const due = start + 200 * (k + 1);
      const wait = due - performance.now();
      if (wait > 0) await sleep(wait);
      if (this.ws.readyState !== WebSocket.OPEN) break;
      this.ws.send(audio.subarray(k * 1600, (k + 1) * 1600), { binary: true });
    }
    return start;
  }

  async close() {
    if (this.ws.readyState === WebSocket.OPEN) this.send('close', { reason: 'end' });
    await sleep(200);
    this.ws.close();
  }
}

/** Voice metrics: mean and quantiles (ms) per latency stage, and the counters. */
function parseVoiceMetrics(text) {
  const stages = {};
  const counters = {};
  for (const line of text.split('\n')) {
    let m = /^parley_voice_turn_latency_seconds_(sum|count)\{stage="([a-z_]+)"\} (\S+)$/.exec(line);
    if (m) {
      (stages[m[2]] ??= {})[m[1]] = Number(m[3]);
      continue;
    }
    m = /^parley_voice_turn_latency_seconds\{stage="([a-z_]+)",quantile="([0-9.]+)"\} (\S+)$/.exec(
      line,
    );
    if (m) {
      (stages[m[1]] ??= {})[`p${Math.round(Number(m[2]) * 100)}`] = Number(m[3]);
      continue;
    }
    m = /^parley_voice_([a-z_]+_total) (\S+)$/.exec(line);
    if (m) counters[m[1]] = Number(m[2]);
  }
  const ms = (v) => (v === undefined ? null : Math.round(v * 1000));
  const latency = {};
  for (const [stage, v] of Object.entries(stages)) {
    latency[stage] = {
      mean: v.count > 0 ? Math.round((v.sum / v.count) * 1000) : null,
      p50: ms(v.p50),
      p95: ms(v.p95),
      turns: v.count ?? 0,
    };
  }
  return { latency, counters };
}

function percentile(sorted, q) {
  if (sorted.length === 0) return null;
  return Math.round(sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]);
}

/**
 * Trains the mood bot into `dir`/models and starts `parley run` with the Genesys connector
 * (pocketsphinx with a pool of `pool`, TTS `tts`), on a scratch database of DATABASE_URL's
 * server when set (else an embedded one); everything is undone by `cleanups`.
 */
async function startVoiceServer(dir, { apiKey, pool, tts, cleanups }) {
  mkdirSync(dir, { recursive: true });
  await trainParley({ ...moodbotFiles(), out: path.join(dir, 'models') });
  writeFileSync(
    path.join(dir, 'credentials.yml'),
    [
      'genesys:',
      `  api_key: ${apiKey}`,
      '  server_url: localhost',
      `  asr: { name: pocketsphinx, pool_size: ${pool} }`,
      `  tts: { name: ${tts} }`,
      '',
    ].join('\n'),
  );
  const env = { PARLEY_CREDENTIALS: path.join(dir, 'credentials.yml') };
  if (process.env.DATABASE_URL) {
    const db = await createScratchDatabase(process.env.DATABASE_URL);
    cleanups.push(() => db.stop());
    env.DATABASE_URL = db.url;
  }
  const server = await startParley(path.join(dir, 'models'), env);
  cleanups.push(() => server.close());
  return server;
}

module.exports = {
  startVoiceServer,
  Caller,
  noiseOnly,
  onNoisyLine,
  parseVoiceMetrics,
  percentile,
  serverUsage,
  speechEndMs,
};
