import {
  cpSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { mulawSilence } from 'src/core';
import { ProcessTts } from 'src/modules/voice-gateway/engines/process-tts';
import request from 'supertest';
import { ran, startActionServer, withEndpointsFile } from 'test/utils/action-server';
import { AudioHookClient } from 'test/utils/audiohook-client';
import { botFiles, MOODBOT, MOODBOT_DIR, trainBot } from 'test/utils/bots';
import { startTestApp, type TestApp } from 'test/utils/create-test-app';
import {
  breathAndCough,
  onNoisyLine,
  userTexts,
  waitForUserText as waitForUserTextOf,
} from 'test/utils/voice';
import { parse, stringify } from 'yaml';

const API_KEY = 'voice-recognition-test-key';

/** This process's pocketsphinx children (pid and command line), from /proc. */
function pocketsphinxChildren(): Array<{ pid: number; args: string[] }> {
  const out: Array<{ pid: number; args: string[] }> = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid !== process.pid || !comm.startsWith('pocketsphinx')) continue;
      const args = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      out.push({ pid: Number(entry), args });
    } catch {
      // ended meanwhile
    }
  }
  return out;
}

/**
 * Recognition over the real WebSocket path: espeak-ng caller speech on a noisy line, the speech
 * gate, warm pocketsphinx processes, the moodbot (plus a slow custom action), and the AudioHook
 * pause/resume roles. The last test closes the server and checks no recogniser process is left.
 */
describe('voice recognition over AudioHook (e2e)', () => {
  let dir: string;
  let t: TestApp;
  let wsUrl: string;
  let releaseAction: () => void = () => undefined;
  let serverClosed = false;
  let actions: Awaited<ReturnType<typeof withEndpointsFile>>;
  const caller = ProcessTts.fromOptions('espeak-ng', {});
  /** An utterance on a noisy line: 0.6 s of line noise before, 1.2 s after. */
  const say = async (text: string, seed = 1): Promise<Buffer> =>
    onNoisyLine(Buffer.concat([mulawSilence(600), await caller.render(text), mulawSilence(1200)]), {
      seed,
    });

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'parley-voice-recognition-'));
    cpSync(join(MOODBOT_DIR, 'data'), join(dir, 'data'), { recursive: true });
    // a slow custom action behind a new intent
    const nlu = parse(readFileSync(join(dir, 'data', 'nlu.yml'), 'utf8')) as {
      nlu: Array<{ intent: string; examples: string }>;
    };
    nlu.nlu.push({
      intent: 'check_order',
      examples: '- where is my order\n- check my order\n- track my order\n- order status\n',
    });
    writeFileSync(join(dir, 'data', 'nlu.yml'), stringify(nlu));
    writeFileSync(
      join(dir, 'data', 'rules_order.yml'),
      stringify({
        version: '3.1',
        rules: [
          {
            rule: 'look up an order',
            steps: [{ intent: 'check_order' }, { action: 'action_check_order' }],
          },
        ],
      }),
    );
    const domain = parse(readFileSync(join(MOODBOT_DIR, 'domain.yml'), 'utf8')) as {
      intents: string[];
      actions?: string[];
    };
    domain.intents.push('check_order');
    domain.actions = [...(domain.actions ?? []), 'action_check_order'];
    writeFileSync(join(dir, 'domain.yml'), stringify(domain));
    trainBot({ ...botFiles(dir), config: MOODBOT.config }, join(dir, 'models'));

    actions = await withEndpointsFile(
      startActionServer({
        action_check_order: async () => {
          await new Promise<void>((resolve) => (releaseAction = resolve));
          return ran([], [{ text: 'Your order is on its way.' }]);
        },
      }),
    );
    writeFileSync(
      join(dir, 'credentials.yml'),
      stringify({
        genesys: {
          api_key: API_KEY,
          server_url: 'localhost',
          asr: { name: 'pocketsphinx', pool_size: 2 },
          tts: { name: 'espeak-ng' },
          pause_audio_after: 0.3,
        },
      }),
    );
    t = await startTestApp({
      env: {
        PARLEY_CREDENTIALS: join(dir, 'credentials.yml'),
        PARLEY_ENDPOINTS: actions.endpoints,
      },
    });
    await request(t.url)
      .put('/model')
      .send({ model_file: join(dir, 'models') })
      .expect(204);
    wsUrl = `${t.url.replace('http', 'ws')}/webhooks/genesys/websocket`;
  }, 180_000);

  afterAll(async () => {
    releaseAction();
    if (!serverClosed) await t?.close();
    await actions?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const waitForUserText = (id: string, text: string): Promise<void> =>
    waitForUserTextOf(t.url, id, text, 200);

  async function openCall(conversationId: string): Promise<AudioHookClient> {
    const client = await AudioHookClient.connect({ url: wsUrl, apiKey: API_KEY });
    client.open({ conversationId });
    await client.waitForType('opened');
    await waitForUserText(conversationId, '/session_start');
    return client;
  }

  it('hears "hello" at the start of an utterance; line noise, breathing and a cough make no turn', async () => {
    const id = '6a1f7c52-0d3e-4b7a-9a51-2c8d5e0f1a01';
    const client = await openCall(id);
    await client.stream(onNoisyLine(new Uint8Array(0), { durationMs: 2000, seed: 5 }), 0);
    await client.stream(breathAndCough(), 0);
    await client.stream(await say('hello', 6), 0);
    await waitForUserText(id, 'hello');
    // more noise, then a second utterance: any false turn would sit between the two
    await client.stream(breathAndCough(8), 0);
    await client.stream(await say('I am sad', 9), 0);
    await waitForUserText(id, 'i am sad');
    expect(await userTexts(t.url, id)).toEqual(['/session_start', 'hello', 'i am sad']);
    client.send('close', { reason: 'end' });
    await client.waitForType('closed');
    client.close();
  }, 60_000);

  it('pauses the caller audio during a slow custom action (server pause → client paused, server resume → client resumed)', async () => {
    const id = '6a1f7c52-0d3e-4b7a-9a51-2c8d5e0f1a02';
    const client = await openCall(id);
    await client.stream(await say('where is my order', 11), 0);
    const pause = await client.waitForType('pause', 20_000);
    expect(pause.parameters).toEqual({});
    expect(client.messages.some((m) => m.type === 'resume')).toBe(false);
    client.send('paused');
    releaseAction();
    const resume = await client.waitForType('resume', 20_000);
    expect(resume.parameters).toEqual({});
    expect(resume.seq).toBeGreaterThan(pause.seq);
    client.send('resumed', { start: 'PT4S', discarded: 'PT1.2S' });
    await client.waitFor(() => client.audio.length >= 1, 20_000, 'the action reply audio');
    // audio flows again after the resume
    await client.stream(await say('hello', 12), 0);
    await waitForUserText(id, 'hello');
    expect(await userTexts(t.url, id)).toEqual(['/session_start', 'where is my order', 'hello']);
    expect(client.messages.filter((m) => m.type === 'disconnect')).toEqual([]);
    expect(client.violations).toEqual([]);
    client.send('close', { reason: 'end' });
    await client.waitForType('closed');
    client.close();
  }, 60_000);

  it('keeps grammars in a private folder and leaves no pocketsphinx process once the server closed', async () => {
    const client = await openCall('6a1f7c52-0d3e-4b7a-9a51-2c8d5e0f1a03');
    const children = pocketsphinxChildren();
    expect(children.length).toBeGreaterThan(0); // the call's recogniser and the warm ones
    const grammar = children[0]?.args[children[0].args.indexOf('-jsgf') + 1] ?? '';
    const folder = dirname(grammar);
    expect(existsSync(grammar)).toBe(true);
    expect(statSync(folder).mode & 0o777).toBe(0o700);
    serverClosed = true;
    await t.close(); // the call is still open
    expect(pocketsphinxChildren()).toEqual([]);
    expect(existsSync(folder)).toBe(false);
    client.close();
  }, 60_000);
});
