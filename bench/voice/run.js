'use strict';
/* global fetch, performance, Buffer, setInterval, clearInterval -- Node globals missing from the repo's eslint JS globals */
// Voice load benchmark: N calls (default 20) starting together against the moodbot with the
// offline engines (pocketsphinx ASR with a warm pool, flite TTS); each call is an AudioHook
// client streaming espeak-ng caller speech on a noisy line in real time (200 ms frames, each sent
// once "captured").
//
//   npm run build && node bench/voice/run.js [--calls 20] [--pool 8]
//
// Reports the serving process's CPU (plus its engine children) and memory — not the `parley run`
// launcher's — the latency split measured inside the server (GET /webhooks/genesys/metrics:
// end of speech → first audio, ASR, processing, TTS first byte, added by Parley), and the
// caller-side latency from the end of speech (found in the audio itself, before its trailing
// silence) to the first reply audio, first turns apart. Results: bench/results/voice.json.
const { mkdtempSync, rmSync } = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { setTimeout: sleep } = require('node:timers/promises');
const { cleanupStack, loadAverage, machine, round } = require('../lib/http-bench');
const { ROOT, parseNumberArgs, writeResults } = require('../lib/parley');
const {
  Caller,
  startVoiceServer,
  onNoisyLine,
  parseVoiceMetrics,
  percentile,
  serverUsage,
  speechEndMs,
} = require('./common');

const RESULTS = path.join(__dirname, '..', 'results', 'voice.json');
const API_KEY = 'bench-voice-key';
const TURNS = ['hi', 'I am sad', 'yes'];

/** One call: open, speak each turn in real time, wait for the reply audio, close. */
async function call(wsUrl, speech, index) {
  const caller = await Caller.connect(wsUrl, API_KEY);
  caller.open();
  const latencies = [];
  for (const { audio, endMs } of speech) {
    const before = caller.audioTimes.length;
    const start = await caller.stream(onNoisyLine(audio, { seed: index + 1 }));
    const speechEnd = start + endMs;
    for (let i = 0; i < 100 && caller.audioTimes.length === before; i++) await sleep(100);
    latencies.push(
      caller.audioTimes.length > before ? caller.audioTimes[before] - speechEnd : null,
    );
    // playback: the bot's audio is "played", then the caller speaks again
    caller.send('playback_started');
    caller.send('playback_completed');
  }
  await caller.close();
  return { latencies, audioMessages: caller.audioTimes.length };
}

async function main() {
  const opts = parseNumberArgs(process.argv.slice(2), { calls: 20, pool: 8 });
  const cleanups = cleanupStack();
  const load = loadAverage({ warn: true });
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'parley-bench-voice-'));
  cleanups.push(async () => rmSync(tmp, { recursive: true, force: true }));
  try {
    const server = await startVoiceServer(tmp, {
      apiKey: API_KEY,
      pool: opts.pool,
      tts: 'flite',
      cleanups,
    });
    const { ProcessTts } = require(
      path.join(ROOT, 'dist', 'modules', 'voice-gateway', 'engines', 'process-tts.js'),
    );
    const { mulawSilence } = require(path.join(ROOT, 'dist', 'core'));
    const tts = ProcessTts.fromOptions('espeak-ng', {});
    const speech = [];
    for (const text of TURNS) {
      const audio = Buffer.concat([mulawSilence(400), await tts.render(text), mulawSilence(1400)]);
      speech.push({ audio, endMs: speechEndMs(audio) });
    }
    // let the warm pool fill before the calls start together
    for (let i = 0; i < 100 && serverUsage(server.pid).asrProcesses < opts.pool; i++) {
      await sleep(100);
    }

    const pid = server.pid;
    const before = serverUsage(pid);
    let peakRss = 0;
    let peakAsrRss = 0;
    let peakAsrProcesses = 0;
    const sampler = setInterval(() => {
      const u = serverUsage(pid);
      peakRss = Math.max(peakRss, u.rss);
      peakAsrRss = Math.max(peakAsrRss, u.asrRss);
      peakAsrProcesses = Math.max(peakAsrProcesses, u.asrProcesses);
    }, 250);
    const started = performance.now();
    const wsUrl = `${server.url.replace('http', 'ws')}/webhooks/genesys/websocket`;
    const results = await Promise.all(
      Array.from({ length: opts.calls }, (_, i) => call(wsUrl, speech, i)),
    );
    const wall = (performance.now() - started) / 1000;
    clearInterval(sampler);
    await sleep(500); // let the calls' engine processes exit and be reaped (counted in cutime)
    const cpu = serverUsage(pid).cpu - before.cpu;
    const metrics = parseVoiceMetrics(
      await (await fetch(`${server.url}/webhooks/genesys/metrics`)).text(),
    );
    const sorted = (xs) => xs.filter((x) => x !== null).sort((a, b) => a - b);
    const first = sorted(results.map((r) => r.latencies[0]));
    const later = sorted(results.flatMap((r) => r.latencies.slice(1)));
    const report = {
      calls: opts.calls,
      poolSize: opts.pool,
      turnsPerCall: TURNS.length,
      turnsAnswered: first.length + later.length,
      wallSeconds: round(wall, 1),
      serverCpuSecondsInclEngines: round(cpu, 2),
      serverCpuPercentOfOneCore: round((cpu / wall) * 100, 1),
      serverPeakRssMB: round(peakRss / 1e6, 1),
      asrProcessesPeak: peakAsrProcesses,
      asrProcessesPeakRssMB: round(peakAsrRss / 1e6, 1),
      serverLatencyMs: metrics.latency,
      callerEndOfSpeechToFirstAudioMs: {
        firstTurn: { p50: percentile(first, 0.5), p95: percentile(first, 0.95), max: first.at(-1) },
        laterTurns: {
          p50: percentile(later, 0.5),
          p95: percentile(later, 0.95),
          max: later.at(-1),
        },
      },
      counters: metrics.counters,
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
