import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'pg';
import request from 'supertest';
import { type TestActionServer } from 'test/utils/action-server';
import { startAppWithModel } from 'test/utils/bots';
import {
  credentialsFile,
  type ReceivingServer,
  removeTempDirs,
  startReceivingServer,
} from 'test/utils/channels';
import { cli } from 'test/utils/cli';
import { FIXTURES, type TestApp, uniqueId } from 'test/utils/create-test-app';
import { type ReminderPlan, startReminderActionServer } from 'test/utils/reminder-action-server';

/**
 * Reminders kept in PostgreSQL, with several Parley instances on one database (PostgreSQL lock
 * store): a custom action (test/fixtures/compatbot's `action_remind`, on a test action server)
 * schedules `EXTERNAL_ping` in a conversation held over HTTP with the callback output channel;
 * the reminder's answer ("Ping! Time to leave.") comes back through the callback channel —
 * once, whichever instance fires it, and also after every instance that saw it set restarted.
 */
const BOT = join(FIXTURES, 'compatbot');
const PING = 'Ping! Time to leave.';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('reminders across instances and restarts', () => {
  let dir: string;
  let models: string;
  let actions: TestActionServer;
  let callback: ReceivingServer;
  let env: Record<string, string>;
  let db: Pool;
  const plans = new Map<string, ReminderPlan>();
  const open: TestApp[] = [];

  const startInstance = async (): Promise<TestApp> => {
    // withDomain false: no stand-in domain would fire the stored reminders before the model loads.
    const app = await startAppWithModel(models, { env, withDomain: false });
    open.push(app);
    return app;
  };
  const closeAll = async (): Promise<void> => {
    await Promise.all(open.splice(0).map((app) => app.close()));
  };
  /** The texts the callback channel received for conversation `s`. */
  const callbackTexts = (s: string): string[] =>
    callback.received
      .map((r) => r.body as Record<string, unknown>)
      .filter((b) => b.recipient_id === s)
      .map((b) => b.text as string);
  const storedReminders = async (s: string): Promise<number> =>
    (await db.query('SELECT 1 FROM reminder WHERE conversation_id = $1', [s])).rowCount ?? 0;
  /** Waits (bounded) until `done()` holds. */
  const until = async (done: () => boolean | Promise<boolean>, ms = 20_000): Promise<void> => {
    for (const end = Date.now() + ms; !(await done()) && Date.now() < end;) await sleep(50);
  };
  const userIntents = async (app: TestApp, s: string): Promise<string[]> => {
    const res = await request(app.url).get(`/conversations/${s}/tracker`).expect(200);
    return (res.body.events as Record<string, unknown>[])
      .filter((e) => e.event === 'user')
      .map((e) => (e.parse_data as { intent: { name: string } }).intent.name);
  };
  const remind = async (app: TestApp, s: string): Promise<void> => {
    const res = await request(app.url)
      .post(`/conversations/${s}/trigger_intent?output_channel=callback`)
      .send({ name: 'remind' })
      .expect(200);
    expect(res.body.messages).toEqual([{ recipient_id: s, text: 'I will ping you.' }]);
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'parley-reminders-'));
    models = join(dir, 'models');
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
    actions = await startReminderActionServer(plans);
    callback = await startReceivingServer();
    const endpoints = join(dir, 'endpoints.yml');
    writeFileSync(endpoints, `action_endpoint:\n  url: "${actions.url}"\n`);
    env = {
      PARLEY_ENDPOINTS: endpoints,
      PARLEY_CREDENTIALS: credentialsFile(`rest:\ncallback:\n  url: "${callback.url}/bot"\n`),
      LOCK_STORE: 'postgres',
      REMINDER_POLL_MS: '100',
    };
    db = new Pool({ connectionString: process.env.DATABASE_URL, max: 1 });
  }, 180_000);

  afterAll(async () => {
    await closeAll();
    await db?.end();
    await actions?.close();
    await callback?.close();
    removeTempDirs();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a reminder set through one of two instances answers once, through the callback channel', async () => {
    const a = await startInstance();
    const b = await startInstance();
    const s = uniqueId('remind');
    await remind(a, s);
    await until(async () => callbackTexts(s).includes(PING) && (await storedReminders(s)) === 0);
    // Longer than a sweep of either instance: a second firing would show up now.
    await sleep(500);
    expect(callbackTexts(s)).toEqual(['I will ping you.', PING]);
    expect(await userIntents(b, s)).toEqual(['remind', 'EXTERNAL_ping']);
  });

  it('kill_on_user_msg holds across instances: a user message on the other instance kills it', async () => {
    const [a, b] = open as [TestApp, TestApp];
    const killed = uniqueId('killed');
    const kept = uniqueId('kept');
    plans.set(killed, { inMs: 1_500, killOnUserMessage: true });
    plans.set(kept, { inMs: 1_500, killOnUserMessage: false });
    await remind(a, killed);
    await remind(a, kept);
    for (const s of [killed, kept]) {
      await request(b.url)
        .post('/webhooks/rest/webhook')
        .send({ sender: s, message: '/greet' })
        .expect(200);
    }
    await until(async () => (await storedReminders(killed)) + (await storedReminders(kept)) === 0);
    await sleep(500);
    expect(callbackTexts(kept)).toEqual(['I will ping you.', PING]);
    expect(callbackTexts(killed)).toEqual(['I will ping you.']);
    expect(await userIntents(a, killed)).toEqual(['remind', 'greet']);
    expect(await userIntents(a, kept)).toEqual(['remind', 'greet', 'EXTERNAL_ping']);
  });

  it('a reminder that cannot be stored fails its turn: 500, no event stored; stored again, it fires', async () => {
    const a = open[0] ?? (await startInstance());
    const s = uniqueId('refused');
    const fn = `refuse_${uniqueId('trigger').replace(/[^a-z0-9_]/gi, '_')}`;
    const events = async (): Promise<unknown[]> =>
      (await request(a.url).get(`/conversations/${s}/tracker`).expect(200)).body.events;
    await request(a.url)
      .post('/webhooks/rest/webhook')
      .send({ sender: s, message: '/greet' })
      .expect(200);
    const before = await events();
    // Refuses this conversation's reminders only: other specs may use the table meanwhile.
    await db.query(`CREATE FUNCTION ${fn}() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.conversation_id = '${s}' THEN RAISE EXCEPTION 'reminder refused'; END IF;
        RETURN NEW;
      END $$`);
    try {
      await db.query(
        `CREATE TRIGGER ${fn} BEFORE INSERT ON reminder FOR EACH ROW EXECUTE FUNCTION ${fn}()`,
      );
      const res = await request(a.url)
        .post(`/conversations/${s}/trigger_intent?output_channel=callback`)
        .send({ name: 'remind' });
      expect(res.status).toBe(500);
      expect(res.body).toMatchObject({
        version: expect.any(String),
        status: 'failure',
        reason: expect.any(String),
        message: expect.any(String),
        code: 500,
      });
      expect(await events()).toEqual(before);
      expect(await storedReminders(s)).toBe(0);
    } finally {
      await db.query(`DROP TRIGGER IF EXISTS ${fn} ON reminder`);
      await db.query(`DROP FUNCTION ${fn}()`);
    }
    await remind(a, s);
    await until(async () => callbackTexts(s).includes(PING) && (await storedReminders(s)) === 0);
    expect(callbackTexts(s)).toEqual(['I will ping you.', PING]);
    expect(await userIntents(a, s)).toEqual(['greet', 'remind', 'EXTERNAL_ping']);
  });

  it('a reminder survives a restart of every instance and fires on the new one', async () => {
    const [a] = open as [TestApp];
    const s = uniqueId('restart');
    plans.set(s, { inMs: 3_000, killOnUserMessage: false });
    await remind(a, s);
    await closeAll();
    expect(callbackTexts(s)).toEqual(['I will ping you.']);
    expect(await storedReminders(s)).toBe(1);
    const c = await startInstance();
    await until(async () => callbackTexts(s).includes(PING) && (await storedReminders(s)) === 0);
    await sleep(500);
    expect(callbackTexts(s)).toEqual(['I will ping you.', PING]);
    expect(await userIntents(c, s)).toEqual(['remind', 'EXTERNAL_ping']);
  });
});
