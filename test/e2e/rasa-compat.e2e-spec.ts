import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { ran, startActionServer, type TestActionServer } from 'test/utils/action-server';
import { sayRest, startAppWithModel } from 'test/utils/bots';
import { credentialsFile, removeTempDirs, startReceivingServer } from 'test/utils/channels';
import { BIN, cli, ROOT, startCliServer } from 'test/utils/cli';
import { FIXTURES, startTestApp, uniqueId, type TestApp } from 'test/utils/create-test-app';

/**
 * A bot of this suite (test/fixtures/compatbot) written the way real Rasa 3.x projects are:
 * its domain is a directory of two files, its `utter_*` responses are listed under `actions:`
 * too, a custom action answers as rasa-sdk's `utter_message` does (every key present, empty
 * lists and objects included), a reminder fires an `EXTERNAL_*` intent, and its data holds a
 * CALM flow. Conversations run over the REST channel (and trigger_intent with the callback
 * channel) against a stand-in action server and a stand-in NLG server on loopback.
 */
const BOT = join(FIXTURES, 'compatbot');

/** What rasa-sdk's `dispatcher.utter_message(text=…)` / `(response=…)` puts on the wire. */
function sdkMessage(fields: { text?: string; response?: string }): Record<string, unknown> {
  return {
    text: fields.text ?? null,
    buttons: [],
    elements: [],
    custom: {},
    template: null,
    response: fields.response ?? null,
    image: null,
    attachment: null,
  };
}

/** The ISO date `ms` milliseconds from now, as rasa-sdk's ReminderScheduled sends it. */
const inMs = (ms: number): string => new Date(Date.now() + ms).toISOString();

function startBotActions(): Promise<TestActionServer> {
  return startActionServer({
    action_book: () =>
      ran(
        [],
        [sdkMessage({ text: 'Booking your table.' }), sdkMessage({ response: 'utter_booked' })],
      ),
    action_remind: () =>
      ran(
        [
          {
            event: 'reminder',
            timestamp: null,
            intent: 'EXTERNAL_ping',
            entities: null,
            date_time: inMs(300),
            name: 'ping',
            kill_on_user_msg: false,
          },
        ],
        [sdkMessage({ text: 'I will ping you.' })],
      ),
  });
}

interface NlgCall {
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: Record<string, unknown>;
}

/** A stand-in NLG server (Rasa's NLG server protocol): answers every response by its name. */
async function startNlgServer(): Promise<{
  url: string;
  calls: NlgCall[];
  close(): Promise<void>;
}> {
  const calls: NlgCall[] = [];
  const server: Server = createServer((req, res) => {
    let data = '';
    req.on('data', (c: Buffer) => (data += c.toString()));
    req.on('end', () => {
      const body = JSON.parse(data) as Record<string, unknown>;
      calls.push({ url: req.url ?? '', headers: req.headers, body });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          text: `NLG says ${String(body.response)}.`,
          buttons: [],
          image: null,
          elements: [],
          attachments: [],
          custom: {},
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}/nlg`,
    calls,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe('real Rasa 3.x project shapes', () => {
  let dir: string;
  let models: string;
  let trainOutput: string;
  let actions: TestActionServer;
  let nlg: Awaited<ReturnType<typeof startNlgServer>>;
  let callback: Awaited<ReturnType<typeof startReceivingServer>>;

  const endpointsFile = (name: string, yaml: string): string => {
    const file = join(dir, name);
    writeFileSync(file, yaml);
    return file;
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'parley-compatbot-'));
    models = join(dir, 'models');
    // Rasa's `Domain.load` of a directory: the domain files of test/fixtures/compatbot/domain.
    const trained = cli(
      [
        'train',
        '--data',
        join(BOT, 'data'),
        '--domain',
        join(BOT, 'domain'),
        '--config',
        join(BOT, 'config.yml'),
        '--out',
        models,
      ],
      {},
      120_000,
    );
    if (trained.status !== 0) throw new Error(`training failed: ${trained.stderr}`);
    trainOutput = trained.stderr;
    actions = await startBotActions();
    nlg = await startNlgServer();
    callback = await startReceivingServer();
  }, 180_000);

  afterAll(async () => {
    await actions?.close();
    await nlg?.close();
    await callback?.close();
    removeTempDirs();
    rmSync(dir, { recursive: true, force: true });
  });

  it('trains from a domain directory, with the flows of the data next to its stories', () => {
    expect(trainOutput).toContain('Read 1 flows (and the default patterns).');
    // Its config has no FlowPolicy: the flows are trained but would never run, and training says so.
    expect(trainOutput).toContain('no FlowPolicy');
    expect(trainOutput).toContain(join(BOT, 'data', 'flows.yml'));
  });

  describe('with domain responses, an action server and a credentials.yml naming Rasa channels', () => {
    let t: TestApp;

    beforeAll(async () => {
      const endpoints = endpointsFile(
        'endpoints.yml',
        `action_endpoint:\n  url: "${actions.url}"\n`,
      );
      // Rasa X's `rasa:` and `cmdline` are Rasa channels Parley does not serve: warned, skipped.
      const credentials = credentialsFile(
        `rest:\nrasa:\n  url: "http://localhost:5002/api"\ncmdline:\ncallback:\n  url: "${callback.url}/bot"\n`,
      );
      t = await startAppWithModel(models, {
        env: { PARLEY_ENDPOINTS: endpoints, PARLEY_CREDENTIALS: credentials },
      });
    }, 120_000);

    afterAll(async () => {
      await t?.close();
    });

    it('renders an utter_* listed under actions from the domain, never asking the action server (ActionBotResponse)', async () => {
      const s = uniqueId('greet');
      expect(await sayRest(t.url, s, '/greet')).toEqual([
        { recipient_id: s, text: 'Hello from the domain.' },
      ]);
      expect(await sayRest(t.url, s, '/help')).toEqual([
        {
          recipient_id: s,
          text: 'How can I help?',
          buttons: [{ title: 'Book', payload: '/book' }],
        },
      ]);
      expect(actions.calls.filter((c) => c.sender_id === s)).toEqual([]);
    });

    it('sends each rasa-sdk utter_message once, without its empty buttons, elements and custom (OutputChannel.send_response)', async () => {
      const s = uniqueId('book');
      expect(await sayRest(t.url, s, '/book')).toEqual([
        { recipient_id: s, text: 'Booking your table.' },
        { recipient_id: s, text: 'Your table is booked.' },
      ]);
      const tracker = await request(t.url).get(`/conversations/${s}/tracker`).expect(200);
      const bots = (tracker.body.events as Record<string, unknown>[]).filter(
        (e) => e.event === 'bot',
      );
      expect(bots.map((e) => e.data)).toEqual([
        expect.objectContaining({ buttons: null, elements: null, custom: null }),
        expect.objectContaining({ buttons: null, elements: null, custom: null }),
      ]);
    });

    it('answers a reminder on the channel that set it, before any user message (handle_reminder)', async () => {
      const s = uniqueId('remind');
      const res = await request(t.url)
        .post(`/conversations/${s}/trigger_intent?output_channel=callback`)
        .send({ name: 'remind' })
        .expect(200);
      // Rasa's CallbackOutput is a CollectingOutputChannel: the turn's messages are answered too.
      expect(res.body.messages).toEqual([{ recipient_id: s, text: 'I will ping you.' }]);
      const mine = () =>
        callback.received
          .filter((r) => (r.body as Record<string, unknown>).recipient_id === s)
          .map((r) => r.body);
      // Bounded wait for the reminder (set 300 ms ahead) to fire and reach the callback.
      for (let i = 0; i < 100 && mine().length < 2; i++) {
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(mine()).toEqual([
        { recipient_id: s, text: 'I will ping you.' },
        { recipient_id: s, text: 'Ping! Time to leave.' },
      ]);
      const tracker = await request(t.url).get(`/conversations/${s}/tracker`).expect(200);
      expect(tracker.body.latest_message.intent.name).toBe('EXTERNAL_ping');
    });

    it('execute checks policy and confidence like the action event schema, as replace-events does', async () => {
      const s = uniqueId('exec');
      await sayRest(t.url, s, '/greet');
      const before = await request(t.url).get(`/conversations/${s}/tracker`).expect(200);
      for (const body of [
        { name: 'utter_greet', confidence: 'high' },
        { name: 'utter_greet', policy: 7 },
      ]) {
        const bad = await request(t.url).post(`/conversations/${s}/execute`).send(body).expect(400);
        expect(bad.body).toMatchObject({ status: 'failure', reason: 'BadRequest', code: 400 });
      }
      const after = await request(t.url).get(`/conversations/${s}/tracker`).expect(200);
      expect(after.body.events).toHaveLength((before.body.events as unknown[]).length);
      const ok = await request(t.url)
        .post(`/conversations/${s}/execute`)
        .send({ name: 'utter_greet', policy: 'manual', confidence: 0.75 })
        .expect(200);
      expect(ok.body.messages).toEqual([{ recipient_id: s, text: 'Hello from the domain.' }]);
      const executed = await request(t.url).get(`/conversations/${s}/tracker`).expect(200);
      const actionsRun = (executed.body.events as Record<string, unknown>[]).filter(
        (e) => e.event === 'action' && e.name === 'utter_greet',
      );
      expect(actionsRun.at(-1)).toMatchObject({ policy: 'manual', confidence: 0.75 });
    });

    it('trigger_intent rejects listed entities without an entity name', async () => {
      const res = await request(t.url)
        .post(`/conversations/${uniqueId('trig')}/trigger_intent`)
        .send({ name: 'greet', entities: [{ value: 'x' }] })
        .expect(400);
      expect(res.body).toMatchObject({ status: 'failure', code: 400 });
    });

    it('prints each rasa-sdk message once in the shell', async () => {
      const endpoints = endpointsFile(
        'shell-endpoints.yml',
        `action_endpoint:\n  url: "${actions.url}"\n`,
      );
      const out = await new Promise<string>((resolve, reject) => {
        const child = spawn(
          process.execPath,
          [BIN, 'shell', '--model', models, '--endpoints', endpoints],
          {
            cwd: ROOT,
            env: { ...process.env, LOG_LEVEL: 'silent' },
            stdio: ['pipe', 'pipe', 'pipe'],
          },
        );
        let stdout = '';
        child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
        child.once('error', reject);
        child.once('exit', () => resolve(stdout));
        child.stdin.end('/book\n');
      });
      expect(out).toBe('Booking your table.\nYour table is booked.\n');
    }, 60_000);
  });

  describe('with an NLG server in endpoints.yml', () => {
    let t: TestApp;

    beforeAll(async () => {
      const endpoints = endpointsFile(
        'nlg-endpoints.yml',
        [
          `action_endpoint:\n  url: "${actions.url}"`,
          `nlg:\n  url: "${nlg.url}"\n  token: "nlg-token"\n  headers:\n    X-Bot: compat\n  basic_auth:\n    username: bot\n    password: s3cret`,
        ].join('\n') + '\n',
      );
      t = await startAppWithModel(models, { env: { PARLEY_ENDPOINTS: endpoints } });
    }, 120_000);

    afterAll(async () => {
      await t?.close();
    });

    it('asks the NLG server for every response, with the endpoint token, headers and basic auth (CallbackNaturalLanguageGenerator)', async () => {
      const s = uniqueId('nlg');
      expect(await sayRest(t.url, s, '/greet')).toEqual([
        { recipient_id: s, text: 'NLG says utter_greet.' },
      ]);
      const call = nlg.calls.find(
        (c) => (c.body.tracker as Record<string, unknown>).sender_id === s,
      );
      expect(call?.body).toMatchObject({
        response: 'utter_greet',
        arguments: {},
        channel: { name: 'collector' },
        tracker: { sender_id: s, latest_message: { intent: { name: 'greet' } } },
      });
      expect(call?.url).toBe('/nlg?token=nlg-token');
      expect(call?.headers['x-bot']).toBe('compat');
      expect(call?.headers.authorization).toBe(
        `Basic ${Buffer.from('bot:s3cret').toString('base64')}`,
      );
      expect(actions.calls.filter((c) => c.sender_id === s)).toEqual([]);
    });

    it("renders a custom action's `response` through the NLG server with its kwargs", async () => {
      const s = uniqueId('nlgbook');
      expect(await sayRest(t.url, s, '/book')).toEqual([
        { recipient_id: s, text: 'Booking your table.' },
        { recipient_id: s, text: 'NLG says utter_booked.' },
      ]);
      const call = nlg.calls.find(
        (c) =>
          (c.body.tracker as Record<string, unknown>).sender_id === s &&
          c.body.response === 'utter_booked',
      );
      expect(call?.body.arguments).toMatchObject({ buttons: [], elements: [], custom: {} });
    });
  });

  it('serves a domain directory given as --domain, merged (Domain.from_directory)', async () => {
    const t = await startTestApp({
      env: { PARLEY_DOMAIN: join(BOT, 'domain') },
      withDomain: false,
    });
    try {
      const res = await request(t.url).get('/domain').set('Accept', 'application/json').expect(200);
      const intents = (res.body.intents as Record<string, unknown>[]).map((i) => Object.keys(i)[0]);
      expect(intents).toEqual(expect.arrayContaining(['greet', 'book', 'EXTERNAL_ping']));
      expect(Object.keys(res.body.responses as object)).toEqual(
        expect.arrayContaining(['utter_greet', 'utter_booked']),
      );
    } finally {
      await t.close();
    }
  });

  it('a custom channel that cannot be loaded still stops start-up, naming it', async () => {
    const credentials = credentialsFile('rasa:\naddons.missing.Channel:\n');
    await expect(
      startTestApp({ env: { PARLEY_CREDENTIALS: credentials }, withDomain: false }),
    ).rejects.toThrow('addons.missing.Channel');
  });

  it('parley run reads tracker_store and lock_store, and starts', async () => {
    const endpoints = endpointsFile(
      'stores-endpoints.yml',
      [
        `tracker_store:\n  type: sql\n  dialect: postgresql\n  url: ${process.env.DATABASE_URL}`,
        'lock_store:\n  type: in_memory',
      ].join('\n') + '\n',
    );
    const server = await startCliServer(['--enable-api', '--endpoints', endpoints], {
      ...process.env,
      LOG_LEVEL: 'info',
    });
    try {
      const status = await fetch(`${server.base}/`);
      expect(status.status).toBe(200);
    } finally {
      await server.stop();
    }
    const output = server.output();
    expect(output).not.toContain('tracker_store (type');
    expect(output).not.toContain('lock_store (type');
  }, 60_000);
});
