'use strict';
/* global fetch, performance, Buffer, setInterval, clearInterval -- Node globals missing from the repo's eslint JS globals */
// Voice benchmark: N simultaneous Genesys calls (default 20) to the moodbot with the offline
// engines (pocketsphinx ASR, flite TTS), each call a Genesys-like AudioHook client streaming
// espeak-ng caller speech in real time (200 ms frames).
//
//   npm run build && node bench/voice/run.js [--calls 20]
//
// Reports: server CPU (process + its pocketsphinx children) and memory, and the per-turn latency
// split exported by GET /webhooks/genesys/metrics (ASR, processing, TTS first byte, transcript →
// first audio frame, added by Parley — target < 50 ms), plus the caller-side latency from the end
// of speech to the first reply audio. Database: DATABASE_URL's server (scratch database) or the
// embedded PostgreSQL. Results: console and bench/results/voice.json.
const { spawn } = require('node:child_process');
const { randomUUID } = require('node:crypto');
const { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { setTimeout: sleep } = require('node:timers/promises');
const WebSocket = require('ws');
const {
  cleanupStack,
  createScratchDatabase,
  loadAverage,
  machine,
  round,
} = require('../lib/http-bench');
const {
  BIN,
  MOODBOT: BOT,
  ROOT,
  freePort,
  moodbotFiles,
  parseNumberArgs,
  trainParley,
  writeResults,
} = require('../lib/parley');

const RESULTS = path.join(__dirname, '..', 'results', 'voice.json');
const API_KEY = 'bench-voice-key';
const TURNS = ['hi', 'I am sad', 'yes'];

/** CPU seconds (user+system) and RSS of a pid, from /proc. */
function procStats(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    const tick = 100;
    // utime + stime + cutime + cstime: the process and its reaped children (pocketsphinx, flite)
    const cpu = (Number(stat[11]) + Number(stat[12]) + Number(stat[13]) + Number(stat[14])) / tick;
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const rss = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) * 1024;
    return { cpu, rss };
  } catch {
    return { cpu: 0, rss: 0 };
  }
}

function childPids(pid) {
  const out = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8').split(') ')[1].split(' ');
      if (Number(stat[1]) === pid) out.push(Number(entry));
    } catch {
      /* gone */
    }
  }
  return out;
}

async function startServer(tmp, env) {
  const port = await freePort();
  const child = spawn(
    process.execPath,
    [
      BIN,
      'run',
      '--enable-api',
      '--model',
      path.join(tmp, 'models'),
      '--credentials',
      path.join(tmp, 'credentials.yml'),
      '-p',
      String(port),
    ],
    {
      env: { ...process.env, LOG_LEVEL: 'warn', HOST: '127.0.0.1', ...env },
      stdio: ['ignore', 'ignore', 'inherit'],
    },
  );
  for (let i = 0; i < 120; i++) {
    await sleep(500);
    try {
      const res = await fetch(`http://127.0.0.1:${port}/webhooks/genesys/`);
      if (res.ok) return { child, url: `http://127.0.0.1:${port}` };
    } catch {
      /* not yet */
    }
  }
  child.kill('SIGKILL');
  throw new Error('server did not start');
}

/** One call: open, speak each turn in real time, wait for the reply audio, close. */
async function call(wsUrl, speech) {
  const sessionId = randomUUID();
  const organizationId = randomUUID();
  const ws = new WebSocket(wsUrl, {
    headers: {
      'audiohook-organization-id': organizationId,
      'audiohook-session-id': sessionId,
      'audiohook-correlation-id': randomUUID(),
      'x-api-key': API_KEY,
    },
  });
  let seq = 0;
  let serverseq = 0;
  const audioTimes = [];
  const send = (type, parameters = {}) =>
    ws.send(
      JSON.stringify({
        version: '2',
        id: sessionId,
        type,
        seq: ++seq,
        serverseq,
        position: 'PT0S',
        parameters,
      }),
    );
  const texts = [];
  ws.on('message', (data, isBinary) => {
    if (isBinary) {
      audioTimes.push(performance.now());
      return;
    }
    const m = JSON.parse(data.toString());
    serverseq = m.seq;
    texts.push(m.type);
  });
  await new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
  });
  send('open', {
    organizationId,
    conversationId: randomUUID(),
    participant: { id: randomUUID(), ani: 'tel:+14155550100', aniName: '', dnis: '+18005550199' },
    media: [{ type: 'audio', format: 'PCMU', channels: ['external'], rate: 8000 }],
  });
  const latencies = [];
  for (const audio of speech) {
    const before = audioTimes.length;
    for (let offset = 0; offset < audio.length; offset += 1600) {
      ws.send(audio.subarray(offset, offset + 1600), { binary: true });
      await sleep(200);
    }
    const speechEnd = performance.now() - 1400; // trailing 1.4 s of silence in `speech`
    for (let i = 0; i < 150 && audioTimes.length === before; i++) await sleep(100);
    if (audioTimes.length > before) latencies.push(audioTimes[before] - speechEnd);
    // playback: the bot's audio is "played", then the caller speaks again
    send('playback_started');
    send('playback_completed');
  }
  send('close', { reason: 'end' });
  await sleep(300);
  ws.close();
  return { latencies, audioMessages: audioTimes.length, protocol: texts };
}

function parseMetrics(text) {
  const out = {};
  for (const line of text.split('\n')) {
    const m = /^parley_voice_turn_latency_seconds_(sum|count)\{stage="([a-z_]+)"\} (\S+)$/.exec(
      line,
    );
    if (m) (out[m[2]] ??= {})[m[1]] = Number(m[3]);
  }
  return Object.fromEntries(
    Object.entries(out).map(([stage, v]) => [
      stage,
      v.count > 0 ? round((v.sum / v.count) * 1000, 1) : null,
    ]),
  );
}

async function main() {
  const opts = parseNumberArgs(process.argv.slice(2), { calls: 20 });
  const cleanups = cleanupStack();
  const load = loadAverage({ warn: true });
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'parley-bench-voice-'));
  cleanups.push(async () => rmSync(tmp, { recursive: true, force: true }));
  try {
    await trainParley({ ...moodbotFiles(), out: path.join(tmp, 'models') });
    writeFileSync(
      path.join(tmp, 'credentials.yml'),
      [
        'genesys:',
        `  api_key: ${API_KEY}`,
        '  server_url: localhost',
        `  asr: { name: pocketsphinx, training_data: ${JSON.stringify(path.join(BOT, 'data', 'nlu.yml'))} }`,
        '  tts: { name: flite }',
        '',
      ].join('\n'),
    );
    const env = {};
    if (process.env.DATABASE_URL) {
      const db = await createScratchDatabase(process.env.DATABASE_URL);
      cleanups.push(() => db.stop());
      env.DATABASE_URL = db.url;
    }
    const server = await startServer(tmp, env);
    cleanups.push(async () => {
      server.child.kill('SIGTERM');
      await new Promise((r) => server.child.once('exit', r));
    });
    const { ProcessTts } = require(
      path.join(ROOT, 'dist', 'modules', 'voice-gateway', 'engines', 'process-tts.js'),
    );
    const { mulawSilence } = require(path.join(ROOT, 'dist', 'core'));
    const tts = ProcessTts.fromOptions('espeak-ng', {});
    const speech = [];
    for (const text of TURNS) {
      speech.push(Buffer.concat([mulawSilence(400), await tts.render(text), mulawSilence(1400)]));
    }

    const pid = server.child.pid;
    const cpuOf = () =>
      procStats(pid).cpu + childPids(pid).reduce((s, p) => s + procStats(p).cpu, 0);
    const cpuStart = cpuOf();
    let peakRss = 0;
    let peakAsrRss = 0;
    const sampler = setInterval(() => {
      peakRss = Math.max(peakRss, procStats(pid).rss);
      peakAsrRss = Math.max(
        peakAsrRss,
        childPids(pid).reduce((s, p) => s + procStats(p).rss, 0),
      );
    }, 250);
    const started = performance.now();
    const wsUrl = `${server.url.replace('http', 'ws')}/webhooks/genesys/websocket`;
    const results = await Promise.all(
      Array.from({ length: opts.calls }, () => call(wsUrl, speech)),
    );
    const wall = (performance.now() - started) / 1000;
    clearInterval(sampler);
    await sleep(500); // let the calls' engine processes exit and be reaped (counted in cutime)
    const cpu = cpuOf() - cpuStart;
    const metrics = parseMetrics(
      await (await fetch(`${server.url}/webhooks/genesys/metrics`)).text(),
    );
    const all = results.flatMap((r) => r.latencies).sort((a, b) => a - b);
    const answered = results.reduce((n, r) => n + r.latencies.length, 0);
    const report = {
      calls: opts.calls,
      turnsPerCall: TURNS.length,
      turnsAnswered: answered,
      wallSeconds: round(wall, 1),
      serverCpuSecondsInclEngines: round(cpu, 2),
      serverCpuPercentOfOneCore: round((cpu / wall) * 100, 1),
      serverPeakRssMB: round(peakRss / 1e6, 1),
      asrProcessesPeakRssMB: round(peakAsrRss / 1e6, 1),
      meanLatencyMsByStage: metrics,
      callerEndOfSpeechToFirstAudioMs: {
        p50: all.length ? round(all[Math.floor(all.length * 0.5)], 0) : null,
        p95: all.length ? round(all[Math.floor(all.length * 0.95)], 0) : null,
      },
      load,
      machine: machine(),
    };
    console.log(JSON.stringify(report, null, 2));
    writeResults(RESULTS, report);
  } finally {
    await cleanups.run();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
