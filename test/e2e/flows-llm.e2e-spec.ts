import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { trainBot } from 'test/utils/bots';
import { ROOT, startCliServer, type CliServer } from 'test/utils/cli';
import { startFakeLlmServer, type FakeLlmServer } from 'test/utils/fake-llm-server';

type Json = Record<string, unknown>;

const BANKING = join(ROOT, 'examples', 'banking');

/**
 * A CALM assistant whose commands come from an LLM (SingleStepLLMCommandGenerator) at a local
 * OpenAI-compatible server (test/utils/fake-llm-server.ts; nothing leaves the machine): the
 * banking example's flows and domain with the LLM generator in place of the NLU command adapter,
 * held over the REST channel of `parley run`.
 */
describe('flows driven by an LLM command generator', () => {
  let dir: string;
  let llm: FakeLlmServer;
  let server: CliServer | undefined;
  /** The LLM's answers, one per chat-completions request, in order. */
  const answers: string[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'parley-flows-llm-'));
    llm = await startFakeLlmServer({
      requireKey: 'sk-test-parley',
      chat: () => answers.shift() ?? '',
    });
    const config = join(dir, 'config.yml');
    writeFileSync(
      config,
      [
        'recipe: default.v1',
        'assistant_id: banking_llm',
        'language: en',
        'pipeline:',
        '  - name: WhitespaceTokenizer',
        '  - name: CountVectorsFeaturizer',
        '  - name: LogisticRegressionClassifier',
        '  - name: SingleStepLLMCommandGenerator',
        '    llm:',
        '      model: test-model',
        `      api_base: ${llm.apiBase}`,
        '    flow_retrieval:',
        '      active: false',
        'policies:',
        '  - name: FlowPolicy',
        '',
      ].join('\n'),
    );
    const models = trainBot(
      { data: [join(BANKING, 'data')], domain: join(BANKING, 'domain.yml'), config },
      join(dir, 'models'),
    );
    server = await startCliServer(['--enable-api', '--model', models], {
      ...process.env,
      OPENAI_API_KEY: 'sk-test-parley',
      LOG_LEVEL: 'warn',
    });
  }, 180_000);

  afterAll(async () => {
    await server?.stop();
    await llm?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const say = async (sender: string, message: string): Promise<unknown[]> => {
    const res = await fetch(`${server?.base}/webhooks/rest/webhook`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ sender, message }),
    });
    expect(res.status).toBe(200);
    return ((await res.json()) as Json[]).map((m) => m.text);
  };

  it('starts a flow, fills a slot and cancels as the LLM says, showing it the flows and the conversation', async () => {
    const sender = `llm-${Date.now()}`;
    answers.push('StartFlow(transfer_money)');
    const first = await say(sender, 'I would like to wire some cash');
    expect(first).toHaveLength(1);

    // `recipient` is filled from entities only: an LLM may not set it (Rasa Pro's rule), so the
    // command becomes "cannot handle" and the bot asks to rephrase.
    answers.push('SetSlot(recipient, Anna)');
    const second = await say(sender, 'it goes to Anna');
    expect(second[0]).toBe('I’m sorry I am unable to understand you, could you please rephrase?');

    answers.push('CancelFlow()');
    expect(await say(sender, 'forget it')).toContain('Okay, stopping transfer money.');

    const prompts = llm.prompts();
    expect(prompts).toHaveLength(3);
    // The prompt names the flows with their descriptions and carries the conversation so far.
    expect(prompts[0]).toContain('transfer_money');
    expect(prompts[0]).toContain('I would like to wire some cash');
    expect(prompts[2]).toContain('it goes to Anna');
    expect(prompts[2]).toContain('forget it');
    // The key comes from the environment, as a bearer token.
    expect(llm.requests.every((r) => r.headers.authorization === 'Bearer sk-test-parley')).toBe(
      true,
    );

    const res = await fetch(`${server?.base}/conversations/${sender}/tracker?include_events=ALL`);
    const tracker = (await res.json()) as Json;
    const users = (tracker.events as Json[]).filter((e) => e.event === 'user');
    expect(users.map((u) => (u.parse_data as Json).commands)).toEqual([
      [{ command: 'start flow', flow: 'transfer_money' }],
      [{ command: 'set slot', name: 'recipient', value: 'Anna', extractor: 'LLM' }],
      [{ command: 'cancel flow' }],
    ]);
    expect((users[0]?.parse_data as Json).flows_in_prompt).toEqual(
      expect.arrayContaining(['transfer_money', 'check_balance']),
    );
    const events = (tracker.events as Json[]).map(
      (e) => `${e.event as string} ${(e.flow_id ?? e.name ?? '') as string}`,
    );
    expect(events).toContain('flow_started transfer_money');
    expect(events).toContain('flow_cancelled transfer_money');
    expect(tracker.stack).toEqual([]);
  });

  it('answers with the internal-error pattern when the LLM cannot be reached', async () => {
    const sender = `llm-down-${Date.now()}`;
    llm.configure({ requireKey: 'sk-test-parley', failWithStatus: 500 });
    try {
      const answer = await say(sender, 'hello?');
      expect(answer).toEqual([
        'Sorry, I am having trouble with that. Please try again in a few minutes.',
      ]);
    } finally {
      llm.configure({ requireKey: 'sk-test-parley', chat: () => answers.shift() ?? '' });
    }
  });
});
