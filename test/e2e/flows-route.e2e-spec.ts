import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import {
  FLOWSBOT,
  FLOWSBOT_DIR,
  sayRest,
  startAppWithTrainedBot,
  type TrainedBotApp,
} from 'test/utils/bots';
import { startTestApp, testDomain, uniqueId, type TestApp } from 'test/utils/create-test-app';
import { parse, stringify } from 'yaml';

/** The ids of the default patterns a CALM assistant gets (the classic set). */
const DEFAULT_PATTERNS = [
  'pattern_cancel_flow',
  'pattern_cannot_handle',
  'pattern_chitchat',
  'pattern_clarification',
  'pattern_code_change',
  'pattern_collect_information',
  'pattern_completed',
  'pattern_continue_interrupted',
  'pattern_correction',
  'pattern_human_handoff',
  'pattern_internal_error',
  'pattern_repeat_bot_messages',
  'pattern_restart',
  'pattern_search',
  'pattern_session_start',
  'pattern_skip_question',
];

/** The `book_repair` flow as `GET /flows` serialises it (`file_path` and step metadata aside). */
const BOOK_REPAIR = {
  id: 'book_repair',
  name: 'book a repair',
  description: "Book a repair appointment for the user's bike.",
  nlu_trigger: [{ intent: { name: 'book_repair', confidence_threshold: 0.5 } }],
  run_pattern_completed: true,
  steps: [
    {
      id: 'book_repair_0_collect_bike_type',
      collect: 'bike_type',
      next: 'book_repair_1_collect_weekday',
      utter: 'utter_ask_bike_type',
      ask_before_filling: false,
      reset_after_flow_ends: true,
      rejections: [],
    },
    {
      id: 'book_repair_1_collect_weekday',
      collect: 'weekday',
      next: 'confirm',
      utter: 'utter_ask_weekday',
      ask_before_filling: false,
      reset_after_flow_ends: true,
      rejections: [],
    },
    {
      id: 'confirm',
      collect: 'confirm_repair',
      next: [
        {
          if: 'slots.confirm_repair',
          then: [
            { id: 'book_repair_3_utter_repair_booked', action: 'utter_repair_booked', next: 'END' },
          ],
        },
        {
          else: [
            {
              id: 'book_repair_4_utter_repair_not_booked',
              action: 'utter_repair_not_booked',
              next: 'END',
            },
          ],
        },
      ],
      utter: 'utter_ask_confirm_repair',
      ask_before_filling: true,
      reset_after_flow_ends: true,
      rejections: [],
    },
  ],
};

type FlowJson = Record<string, unknown> & { id: string; steps: StepJson[] };
type StepJson = Record<string, unknown> & { id: string; metadata?: { line_numbers?: string } };

/** A copy without what depends on where the flow was read: `file_path`, step `metadata`. */
function placeless(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(placeless);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([key]) => key !== 'file_path' && key !== 'metadata')
      .map(([key, v]) => [key, placeless(v)]),
  );
}

/** `line_numbers` of each top-level step (Rasa's YAML reader puts them into step metadata). */
function lineNumbers(flow: FlowJson | undefined): (string | undefined)[] {
  return (flow?.steps ?? []).map((s) => s.metadata?.line_numbers);
}

/**
 * `GET /flows` (Rasa Pro): the served model's flows with the merged default patterns, in Rasa's
 * serialisation. The flowsbot fixture is trained by `parley train` and loaded by PUT /model.
 */
describe('GET /flows', () => {
  let t: TrainedBotApp;

  beforeAll(async () => {
    t = await startAppWithTrainedBot(FLOWSBOT, 'parley-flows-');
  }, 120_000);

  afterAll(async () => {
    await t?.close();
  });

  it("lists the bot's flows first, then the default patterns, in Rasa's shape", async () => {
    const res = await request(t.url).get('/flows').expect(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    const flows = res.body as FlowJson[];
    expect(flows.map((f) => f.id).slice(0, 2)).toEqual(['opening_hours', 'book_repair']);
    expect(
      flows
        .map((f) => f.id)
        .slice(2)
        .sort(),
    ).toEqual(DEFAULT_PATTERNS);

    const book = flows.find((f) => f.id === 'book_repair');
    expect(placeless(book)).toEqual(BOOK_REPAIR);
    expect(book?.file_path).toMatch(/flowsbot\/data\/flows\.yml$/);
    expect(lineNumbers(book)).toEqual(['17-17', '18-18', '19-29']);

    // No `name` given: none is written (Rasa writes only a custom name).
    expect(placeless(flows.find((f) => f.id === 'opening_hours'))).toEqual({
      id: 'opening_hours',
      description: 'Tell the user when the workshop is open.',
      nlu_trigger: [{ intent: { name: 'ask_hours', confidence_threshold: 0 } }],
      run_pattern_completed: true,
      steps: [{ id: 'opening_hours_0_utter_hours', action: 'utter_hours', next: 'END' }],
    });

    // Default patterns carry no file and keep their own step ids.
    const cancel = flows.find((f) => f.id === 'pattern_cancel_flow');
    expect(cancel).not.toHaveProperty('file_path');
    expect(cancel?.steps).toEqual([
      expect.objectContaining({ action: 'action_cancel_flow' }),
      expect.objectContaining({ action: 'utter_flow_cancelled_rasa', next: 'END' }),
    ]);
  });
});

describe('GET /flows: auth, no model, no flows', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp({ env: { PARLEY_AUTH_TOKEN: 's3cret' }, withDomain: false });
  });

  afterAll(async () => {
    await t?.close();
  });

  it('answers 401 for a wrong token, as the other API routes', async () => {
    const res = await request(t.url).get('/flows?token=invalid').expect(401);
    expect(res.body).toMatchObject({ status: 'failure', reason: 'NotAuthenticated', code: 401 });
    expect(res.body).toHaveProperty('version');
  });

  it('answers 409 without a model', async () => {
    const res = await request(t.url).get('/flows?token=s3cret').expect(409);
    expect(res.body).toMatchObject({ status: 'failure', code: 409 });
    expect(res.body.message).toContain('No agent loaded');
  });

  it('answers [] for a served assistant without flows', async () => {
    t.registry.load({
      domain: testDomain(),
      modelId: 'b1b2c3d4e5f60718293a4b5c6d7e8f90',
      modelFile: null,
      assistantId: 'no_flows',
    });
    const res = await request(t.url).get('/flows?token=s3cret').expect(200);
    expect(res.body).toEqual([]);
  });
});

/** The flowsbot as one training document, as `POST /model/train` takes it. */
function flowsbotDocument(): string {
  const merged: Record<string, unknown> = {};
  for (const file of ['domain.yml', 'config.yml', 'data/nlu.yml', 'data/flows.yml']) {
    const doc = parse(readFileSync(join(FLOWSBOT_DIR, file), 'utf8')) as Record<string, unknown>;
    delete doc.version;
    Object.assign(merged, doc);
  }
  return stringify({ version: '3.1', ...merged });
}

/**
 * `POST /model/train` with a `flows:` key trains the flows as `parley train` does; the model,
 * loaded by PUT /model, holds a flow conversation over the REST channel.
 */
describe('POST /model/train with flows', () => {
  let t: TestApp;
  let dir: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'parley-flows-train-'));
    t = await startTestApp({ withDomain: false });
  });

  afterAll(async () => {
    await t?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('trains the flows, and the loaded model runs them', async () => {
    const document = flowsbotDocument();
    const trained = await request(t.url)
      .post('/model/train?save_to_default_model_directory=false')
      .set('Content-Type', 'application/x-yaml')
      .send(document)
      .buffer(true)
      .parse((res, done) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => done(null, Buffer.concat(chunks)));
      })
      .expect(200);
    const archive = join(dir, String(trained.headers.filename));
    writeFileSync(archive, trained.body as Buffer);
    await request(t.url).put('/model').send({ model_file: archive }).expect(204);

    const flows = (await request(t.url).get('/flows').expect(200)).body as FlowJson[];
    const book = flows.find((f) => f.id === 'book_repair');
    expect(placeless(book)).toEqual(BOOK_REPAIR);
    expect(book?.file_path).toBe('request body');
    // Line numbers point into the request body.
    const [first] = lineNumbers(book);
    const line = Number(first?.split('-')[0]);
    expect(document.split('\n')[line - 1]).toMatch(/^\s*- collect: bike_type$/);

    const sender = uniqueId('flows');
    const say = async (message: string): Promise<unknown[]> =>
      (await sayRest(t.url, sender, message)).map((m) => m.text);
    expect(await say('when are you open')).toEqual([
      'The workshop is open Monday to Friday, nine to six.',
      'What else can I help you with?',
    ]);
    expect(await say('my bike needs fixing')).toEqual([
      'What kind of bike is it: road, city or mountain?',
    ]);
    const tracker = (await request(t.url).get(`/conversations/${sender}/tracker`).expect(200))
      .body as { stack: Record<string, unknown>[] };
    expect(tracker.stack).toEqual([
      expect.objectContaining({
        type: 'flow',
        flow_id: 'book_repair',
        step_id: 'book_repair_0_collect_bike_type',
      }),
      expect.objectContaining({ type: 'pattern_collect_information', collect: 'bike_type' }),
    ]);
    expect(await say('it is a city bike')).toEqual(['Which day would you like to bring it in?']);
    expect(await sayRest(t.url, sender, 'friday works')).toEqual([
      {
        recipient_id: sender,
        text: 'Book a repair of your city bike on friday?',
        buttons: [
          { title: 'Yes', payload: '/affirm' },
          { title: 'No', payload: '/deny' },
        ],
      },
    ]);
    expect(await say('no')).toEqual([
      'Alright, I have not booked anything.',
      'What else can I help you with?',
    ]);

    const after = (await request(t.url).get(`/conversations/${sender}/tracker`).expect(200))
      .body as { stack: unknown[]; slots: Record<string, unknown>; events: { event: string }[] };
    expect(after.stack).toEqual([]);
    // The flow's collected slots are reset when it ends.
    expect(after.slots).toMatchObject({ bike_type: null, weekday: null, confirm_repair: null });
    const names = after.events.map((e) => e.event);
    expect(names).toContain('flow_started');
    expect(names).toContain('flow_completed');
  }, 120_000);

  it('refuses flows given as a list with a 400 naming the problem', async () => {
    const body = `${flowsbotDocument().replace(/^flows:[\s\S]*$/m, '')}flows:\n  - book_repair\n`;
    const res = await request(t.url)
      .post('/model/train?save_to_default_model_directory=false')
      .set('Content-Type', 'application/x-yaml')
      .send(body)
      .expect(400);
    expect(res.body.message).toContain('The request body does not contain valid YAML. Error:');
    expect(res.body.message).toContain('Found a list but expected a dictionary of flows.');
  });

  it('refuses flows the domain cannot run (a collect without a question) with a 400', async () => {
    const body = flowsbotDocument().replace(/ {2}utter_ask_weekday:\n(?: {4}.*\n)+/, '');
    expect(body).not.toContain('utter_ask_weekday:');
    const res = await request(t.url)
      .post('/model/train?save_to_default_model_directory=false')
      .set('Content-Type', 'application/x-yaml')
      .send(body)
      .expect(400);
    expect(res.body.message).toContain("neither a response 'utter_ask_weekday'");
  });
});
