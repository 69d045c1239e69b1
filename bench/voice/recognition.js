'use strict';
/* global fetch, performance, Buffer -- Node globals missing from the repo's eslint JS globals */
// Voice recognition benchmark: every NLU example of the test mood bot, spoken by synthetic voices
// (espeak-ng en-us, espeak-ng en-us+f3, flite slt), sent as 8 kHz µ-law on a line with light
// noise, streamed in real time through the real WebSocket path (AudioHook → speech gate →
// pocketsphinx → NLU). Meanwhile one more call streams 60 s of silence, line noise, breaths,
// clicks and coughs.
//
//   npm run build && node bench/voice/recognition.js [--calls 8] [--pool 8]
//
// Reports: the share of utterances whose user turn got the example's intent (target ≥ 90 %),
// misses (no turn), false turns from the noise-only call (target 0), the latency split measured
// inside the server, and the server's CPU and memory. Results: bench/results/voice-recognition.json.
const { mkdtempSync, readFileSync, rmSync } = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { setTimeout: sleep } = require('node:timers/promises');
const { parse } = require('yaml');
const { cleanupStack, loadAverage, machine, round } = require('../lib/http-bench');
const { MOODBOT, ROOT, parseNumberArgs, writeResults } = require('../lib/parley');
const {
  Caller,
  startVoiceServer,
  noiseOnly,
  onNoisyLine,
  parseVoiceMetrics,
  serverUsage,
} = require('./common');

const RESULTS = path.join(__dirname, '..', 'results', 'voice-recognition.json');
const API_KEY = 'bench-voice-recognition-key';
const VOICES = [
  { engine: 'espeak-ng', voice: 'en-us' },
  { engine: 'espeak-ng', voice: 'en-us+f3' },
  { engine: 'flite', voice: 'slt' },
];

/** [text, intent] of every NLU example (entity annotations reduced to their text). */
function examples() {
  const nlu = parse(readFileSync(path.join(MOODBOT, 'data', 'nlu.yml'), 'utf8')).nlu;
  const out = [];
  for (const block of nlu) {
    if (!block.intent) continue;
    for (const line of String(block.examples).split('\n')) {
      const text = line
        .replace(/^\s*-\s*/, '')
        .replace(/\[([^\]]+)\]\([^)]*\)/g, '$1')
        .trim();
      if (text) out.push({ text, intent: block.intent });
    }
  }
  return out;
}

async function tracker(url, id) {
  const res = await fetch(`${url}/conversations/${id}/tracker`);
  return res.ok ? res.json() : { events: [] };
}

const userEvents = (t) =>
  t.events.filter((e) => e.event === 'user' && !String(e.text).startsWith('/'));

/** One call speaking `items` one after another; each waits for its turn (or 4 s of nothing). */
async function speaker(url, wsUrl, items, seed) {
  const caller = await Caller.connect(wsUrl, API_KEY);
  caller.open();
  const outcomes = [];
  for (const item of items) {
    const seen = userEvents(await tracker(url, caller.conversationId)).length;
    await caller.stream(onNoisyLine(item.audio, { seed: seed++ }));
    let events = [];
    for (let i = 0; i < 40; i++) {
      events = userEvents(await tracker(url, caller.conversationId));
      if (events.length > seen) break;
      await sleep(100);
    }
    const turns = events.slice(seen);
    outcomes.push({
      ...item,
      audio: undefined,
      heard: turns.map((e) => e.text),
      intents: turns.map((e) => e.parse_data?.intent?.name ?? null),
    });
    caller.send('playback_started');
    caller.send('playback_completed');
  }
  await caller.close();
  return outcomes;
}

async function main() {
  const opts = parseNumberArgs(process.argv.slice(2), { calls: 8, pool: 8 });
  const cleanups = cleanupStack();
  const load = loadAverage({ warn: true });
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'parley-bench-voice-rec-'));
  cleanups.push(async () => rmSync(tmp, { recursive: true, force: true }));
  try {
    const server = await startVoiceServer(tmp, {
      apiKey: API_KEY,
      pool: opts.pool,
      tts: 'espeak-ng',
      cleanups,
    });
    const { ProcessTts } = require(
      path.join(ROOT, 'dist', 'modules', 'voice-gateway', 'engines', 'process-tts.js'),
    );
    const { mulawSilence } = require(path.join(ROOT, 'dist', 'core'));
    const items = [];
    for (const v of VOICES) {
      const tts = ProcessTts.fromOptions(v.engine, { voice: v.voice });
      for (const e of examples()) {
        const speech = await tts.render(e.text);
        items.push({
          ...e,
          voice: `${v.engine} ${v.voice}`,
          audio: Buffer.concat([mulawSilence(500), speech, mulawSilence(1000)]),
        });
      }
    }
    const wsUrl = `${server.url.replace('http', 'ws')}/webhooks/genesys/websocket`;
    const before = serverUsage(server.pid);
    const started = performance.now();
    const shards = Array.from({ length: opts.calls }, (_, i) =>
      items.filter((_, k) => k % opts.calls === i),
    );
    const noiseCall = (async () => {
      const caller = await Caller.connect(wsUrl, API_KEY);
      caller.open();
      await caller.stream(noiseOnly(60_000));
      await sleep(3000); // a late false turn would still be counted
      const turns = userEvents(await tracker(server.url, caller.conversationId));
      await caller.close();
      return turns.map((e) => e.text);
    })();
    const [falseTurns, ...outcomes] = await Promise.all([
      noiseCall,
      ...shards.map((shard, i) => speaker(server.url, wsUrl, shard, 1000 * (i + 1))),
    ]);
    const wall = (performance.now() - started) / 1000;
    const cpu = serverUsage(server.pid).cpu - before.cpu;
    const metrics = parseVoiceMetrics(
      await (await fetch(`${server.url}/webhooks/genesys/metrics`)).text(),
    );
    const all = outcomes.flat();
    const right = (o) => o.intents.length === 1 && o.intents[0] === o.intent;
    const byVoice = {};
    for (const o of all) {
      const v = (byVoice[o.voice] ??= { utterances: 0, rightIntent: 0, noTurn: 0 });
      v.utterances++;
      if (right(o)) v.rightIntent++;
      if (o.intents.length === 0) v.noTurn++;
    }
    for (const v of Object.values(byVoice)) {
      v.rightIntentShare = round(v.rightIntent / v.utterances, 3);
    }
    const report = {
      utterances: all.length,
      voices: VOICES.map((v) => `${v.engine} ${v.voice}`),
      lineNoiseRms: 120,
      rightIntent: all.filter(right).length,
      rightIntentShare: round(all.filter(right).length / all.length, 3),
      noTurn: all.filter((o) => o.intents.length === 0).length,
      moreThanOneTurn: all.filter((o) => o.intents.length > 1).length,
      byVoice,
      noiseOnlySeconds: 60,
      falseTurnsFromNoise: falseTurns.length,
      falseTurnTexts: falseTurns,
      serverLatencyMs: metrics.latency,
      counters: metrics.counters,
      concurrentCalls: opts.calls + 1,
      wallSeconds: round(wall, 1),
      serverCpuPercentOfOneCore: round((cpu / wall) * 100, 1),
      misses: all
        .filter((o) => !right(o))
        .map((o) => ({
          voice: o.voice,
          text: o.text,
          intent: o.intent,
          heard: o.heard,
          got: o.intents,
        })),
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
