import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { botFiles, trainBot } from 'test/utils/bots';
import { cliAsync, freePort, ROOT, startCliServer, type CliServer } from 'test/utils/cli';
import { uniqueId } from 'test/utils/create-test-app';

/** The CALM example assistant (examples/banking): flows started by intents, no LLM. */
const BANKING = join(ROOT, 'examples', 'banking');

type Json = Record<string, unknown>;

/** The example's own action server, started as its README says, on `port`. */
async function startBankingActions(port: number): Promise<ChildProcess> {
  const child = spawn(process.execPath, [join(BANKING, 'actions', 'server.js'), String(port)], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
  for (let i = 0; i < 80 && child.exitCode === null; i++) {
    const ok = await fetch(`http://127.0.0.1:${port}/health`).catch(() => null);
    if (ok?.status === 200) return child;
    await new Promise((r) => setTimeout(r, 100));
  }
  child.kill('SIGTERM');
  throw new Error(`the banking action server did not start:\n${output}`);
}

function stopChild(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

/**
 * The banking example end to end: trained with `parley train`, its action server (plain Node)
 * running the custom actions, its e2e test cases passing under `parley test e2e`, and the same
 * conversations held live over the REST channel of `parley run`, with the dialogue stack, the
 * flow events and the slots read back from the tracker.
 */
describe('the CALM example assistant (examples/banking) end to end', () => {
  let dir: string;
  let models: string;
  let endpoints: string;
  let actionsPort: number;
  let actions: ChildProcess | undefined;
  let server: CliServer | undefined;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'parley-banking-'));
    models = trainBot(botFiles(BANKING), join(dir, 'models'));
    actionsPort = await freePort();
    actions = await startBankingActions(actionsPort);
    endpoints = join(dir, 'endpoints.yml');
    writeFileSync(
      endpoints,
      `action_endpoint:\n  url: "http://127.0.0.1:${actionsPort}/webhook"\n`,
    );
    server = await startCliServer(['--enable-api', '--model', models, '--endpoints', endpoints], {
      ...process.env,
      LOG_LEVEL: 'warn',
    });
  }, 180_000);

  afterAll(async () => {
    await server?.stop();
    await stopChild(actions);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** One message over the REST channel: the texts of the bot's answers. */
  const say = async (sender: string, message: string): Promise<unknown[]> => {
    const res = await fetch(`${server?.base}/webhooks/rest/webhook`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ sender, message }),
    });
    expect(res.status).toBe(200);
    return ((await res.json()) as Json[]).map((m) => m.text);
  };
  const tracker = async (sender: string): Promise<Json> => {
    const res = await fetch(`${server?.base}/conversations/${sender}/tracker`);
    expect(res.status).toBe(200);
    return (await res.json()) as Json;
  };
  /** The flow events of a tracker, as `event flow_id` lines in order. */
  const flowEvents = (t: Json): string[] =>
    (t.events as Json[])
      .filter((e) => typeof e.event === 'string' && e.event.startsWith('flow_'))
      .map((e) => `${e.event as string} ${e.flow_id as string}`);
  const stackOf = (t: Json): { flow_id: string; step_id: string; type: string }[] =>
    t.stack as { flow_id: string; step_id: string; type: string }[];
  /** The values the `slot` events of a tracker set for `name`, in order. */
  const slotValues = (t: Json, name: string): unknown[] =>
    (t.events as Json[]).filter((e) => e.event === 'slot' && e.name === name).map((e) => e.value);

  const ASK_RECIPIENT = 'Whom would you like to pay?';
  const COMPLETED = 'Is there anything else I can do for you?';

  it('passes its e2e test cases under `parley test e2e` with its action server', async () => {
    const out = join(dir, 'e2e-out');
    const run = await cliAsync([
      'test',
      'e2e',
      join(BANKING, 'tests'),
      '--model',
      models,
      '--endpoints',
      endpoints,
      '--out',
      out,
    ]);
    expect(run.stdout).not.toContain('FAILURES');
    expect(run.stdout).toMatch(/=+ 0 failed, 8 passed =+\n$/);
    expect(run.status).toBe(0);
    const results = JSON.parse(readFileSync(join(out, 'e2e_results.json'), 'utf8')) as {
      passed: { name: string }[];
      failed: unknown[];
    };
    expect(results.failed).toEqual([]);
    expect(results.passed.map((r) => r.name)).toEqual([
      'greeting',
      'a full transfer, one question at a time',
      'everything in the first message, then declined',
      'a correction of the recipient in the middle of the flow',
      'stopping the transfer',
      'an amount of zero is refused and asked again',
      'not enough money, the balance instead',
      'the balance on its own',
    ]);
  }, 120_000);

  it('greets without the "anything else" question (run_pattern_completed: false)', async () => {
    const s = uniqueId('bank');
    expect(await say(s, 'hello')).toEqual([
      "Hello, I'm Parley's banking assistant. I can send money for you or look up your balance.",
    ]);
    const t = await tracker(s);
    expect(flowEvents(t)).toEqual(['flow_started greet', 'flow_completed greet']);
    expect(t.stack).toEqual([]);
  });

  it('sends money: collects recipient and amount, checks the funds, confirms', async () => {
    const s = uniqueId('bank');
    expect(await say(s, 'I want to send money')).toEqual([ASK_RECIPIENT]);

    // Mid-flow: the user flow under the collect pattern asking for the recipient.
    let t = await tracker(s);
    expect(stackOf(t).map((f) => [f.type, f.flow_id])).toEqual([
      ['flow', 'transfer_money'],
      ['pattern_collect_information', 'pattern_collect_information'],
    ]);
    expect(stackOf(t)[0]?.step_id).toBe('transfer_money_0_collect_recipient');
    // Frames keep the key order of Rasa's frames through the `stack` updates.
    expect(Object.keys(stackOf(t)[0] ?? {})).toEqual([
      'frame_id',
      'flow_id',
      'step_id',
      'frame_type',
      'type',
    ]);
    expect(stackOf(t)[1]).toMatchObject({ collect: 'recipient', utter: 'utter_ask_recipient' });
    expect((t.latest_message as Json).commands).toEqual([
      { command: 'start flow', flow: 'transfer_money' },
    ]);

    expect(await say(s, 'to Anna')).toEqual(['How many euros should I send to Anna?']);
    expect(await say(s, '50 euros')).toEqual(['Shall I send 50 euros to Anna now?']);
    t = await tracker(s);
    expect(t.slots).toMatchObject({ recipient: 'Anna', amount: 50, has_sufficient_funds: true });
    expect(stackOf(t)[0]?.step_id).toBe('confirm');
    // The custom action ran on the action server and set its slot.
    expect(
      (t.events as Json[]).some((e) => e.event === 'action' && e.name === 'action_check_funds'),
    ).toBe(true);

    expect(await say(s, 'yes')).toEqual(['All set: 50 euros are on their way to Anna.', COMPLETED]);
    t = await tracker(s);
    expect(t.stack).toEqual([]);
    expect(slotValues(t, 'confirm_transfer')).toEqual([null, true, null]);
    // The flow's collected slots are reset when it ends; the action's slot stays.
    expect(t.slots).toMatchObject({
      recipient: null,
      amount: null,
      confirm_transfer: null,
      has_sufficient_funds: true,
    });
    expect(flowEvents(t).filter((e) => !e.endsWith('pattern_collect_information'))).toEqual([
      'flow_started transfer_money',
      'flow_completed transfer_money',
      'flow_started pattern_completed',
      'flow_completed pattern_completed',
    ]);
  });

  it('corrects the recipient in the middle of the flow', async () => {
    const s = uniqueId('bank');
    await say(s, 'I want to send money');
    await say(s, 'to Anna');
    expect(await say(s, 'actually to Maria')).toEqual([
      'Ok, I am updating recipient to Maria respectively.',
      'How many euros should I send to Maria?',
    ]);
    let t = await tracker(s);
    // The adapter's clean-up turns the new value of a slot filled earlier into a correction.
    expect((t.latest_message as Json).commands).toEqual([
      { command: 'correct slot', corrected_slots: [{ name: 'recipient', value: 'Maria' }] },
    ]);
    expect(flowEvents(t)).toContain('flow_started pattern_correction');
    expect(flowEvents(t)).toContain('flow_completed pattern_correction');
    expect(slotValues(t, 'recipient')).toEqual(['Anna', 'Maria']);
    expect(stackOf(t).map((f) => f.flow_id)).toEqual([
      'transfer_money',
      'pattern_collect_information',
    ]);
    expect(stackOf(t)[1]).toMatchObject({ collect: 'amount' });

    expect(await say(s, '20 euros')).toEqual(['Shall I send 20 euros to Maria now?']);
    expect(await say(s, 'yes')).toEqual([
      'All set: 20 euros are on their way to Maria.',
      COMPLETED,
    ]);
    t = await tracker(s);
    expect(t.stack).toEqual([]);
  });

  it('stops the transfer on "stop" (the overridden pattern_cancel_flow)', async () => {
    const s = uniqueId('bank');
    await say(s, 'I want to send money');
    await say(s, 'to Anna');
    expect(await say(s, 'stop')).toEqual(['Okay, stopping transfer money.', COMPLETED]);
    const t = await tracker(s);
    expect((t.latest_message as Json).intent).toMatchObject({ name: 'stop' });
    expect((t.latest_message as Json).commands).toEqual([{ command: 'cancel flow' }]);
    expect(t.stack).toEqual([]);
    const cancelled = (t.events as Json[]).find((e) => e.event === 'flow_cancelled');
    expect(cancelled).toMatchObject({
      flow_id: 'transfer_money',
      step_id: 'transfer_money_1_collect_amount',
    });
    expect(flowEvents(t).filter((e) => !e.endsWith('pattern_collect_information'))).toEqual([
      'flow_started transfer_money',
      'flow_cancelled transfer_money',
      'flow_started pattern_cancel_flow',
      'flow_completed pattern_cancel_flow',
      'flow_completed transfer_money',
      'flow_started pattern_completed',
      'flow_completed pattern_completed',
    ]);
    expect(t.slots).toMatchObject({ recipient: null, amount: null });
    // Nothing to stop any more: no answer, nothing pushed.
    expect(await say(s, 'stop')).toEqual([]);
    expect((await tracker(s)).stack).toEqual([]);
  });

  it('refuses an amount of zero and asks again', async () => {
    const s = uniqueId('bank');
    expect(await say(s, 'send money to Ben')).toEqual(['How many euros should I send to Ben?']);
    expect(await say(s, '0 euros')).toEqual([
      'I can only send an amount above zero.',
      'How many euros should I send to Ben?',
    ]);
    let t = await tracker(s);
    expect(slotValues(t, 'amount')).toEqual([0, null]);
    expect(t.slots).toMatchObject({ recipient: 'Ben', amount: null });
    expect(stackOf(t)[1]).toMatchObject({
      collect: 'amount',
      rejections: [{ if: 'slots.amount <= 0', utter: 'utter_amount_not_positive' }],
    });
    expect(await say(s, '30 euros')).toEqual(['Shall I send 30 euros to Ben now?']);
    expect(await say(s, 'no')).toEqual(['Alright, nothing has been sent.', COMPLETED]);
    t = await tracker(s);
    expect(slotValues(t, 'confirm_transfer')).toEqual([null, false, null]);
  });

  it('links to check_balance when the funds do not cover the amount', async () => {
    const s = uniqueId('bank');
    expect(await say(s, 'send 900 euros to Lena')).toEqual([
      'Your account does not cover 900 euros, so I did not send anything.',
      'You have 500.00 euros in your account.',
      COMPLETED,
    ]);
    const t = await tracker(s);
    expect(t.stack).toEqual([]);
    expect(t.slots).toMatchObject({
      has_sufficient_funds: false,
      balance: '500.00 euros',
      recipient: null,
      amount: null,
    });
    expect(flowEvents(t).filter((e) => !e.endsWith('pattern_collect_information'))).toEqual([
      'flow_started transfer_money',
      'flow_completed transfer_money',
      'flow_started check_balance',
      'flow_completed check_balance',
      'flow_started pattern_completed',
      'flow_completed pattern_completed',
    ]);
    // The linked flow's frame, as the stack event that put it under the ending transfer.
    const pushed = (t.events as Json[])
      .filter((e) => e.event === 'stack')
      .flatMap((e) => JSON.parse(e.update as string) as Json[])
      .map((op) => op.value as Json | undefined)
      .find((v) => v?.flow_id === 'check_balance');
    expect(pushed).toMatchObject({ frame_type: 'link', type: 'flow', step_id: 'START' });
  });

  it('answers the balance in the middle of a transfer and continues it', async () => {
    const s = uniqueId('bank');
    await say(s, 'send money to Ben');
    expect(await say(s, 'what is my balance')).toEqual([
      'You have 500.00 euros in your account.',
      "Let's continue with transfer money.",
      'How many euros should I send to Ben?',
    ]);
    const t = await tracker(s);
    expect(stackOf(t).map((f) => f.flow_id)).toEqual([
      'transfer_money',
      'pattern_collect_information',
    ]);
    const events = (t.events as Json[]).filter((e) =>
      ['flow_interrupted', 'flow_resumed'].includes(e.event as string),
    );
    expect(events).toMatchObject([
      { event: 'flow_interrupted', flow_id: 'transfer_money' },
      { event: 'flow_resumed', flow_id: 'transfer_money' },
    ]);
    expect(await say(s, '40')).toEqual(['Shall I send 40 euros to Ben now?']);
  });

  it('has an action server that refuses unknown actions as rasa-sdk does', async () => {
    const res = await fetch(`http://127.0.0.1:${actionsPort}/webhook`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ next_action: 'action_nope', sender_id: 'x', tracker: {} }),
    });
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ action_name: 'action_nope' });
  });
});
