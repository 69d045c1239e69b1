import { createServer } from 'node:http';
import { type AddressInfo } from 'node:net';
import { LlmCommandGenerator } from 'src/core/flows/llm/llm-command-generator';
import { bankFlows, bankTracker } from 'src/core/flows/llm/llm-fixtures';
import { DialogueStack } from 'src/core/flows/stack';
import { type FakeLlmServer, startFakeLlmServer } from 'test/utils/fake-llm-server';

// Every request the generator makes goes through global fetch; record them all and refuse any
// that would leave the machine.
const realFetch = globalThis.fetch;
const fetched: string[] = [];
beforeAll(() => {
  globalThis.fetch = (url: string | URL | Request, init?: RequestInit) => {
    const href = url instanceof Request ? url.url : String(url);
    fetched.push(href);
    if (!/^http:\/\/127\.0\.0\.1:\d+\//.test(href)) {
      return Promise.reject(new Error(`test refused a call leaving the machine: ${href}`));
    }
    return realFetch(url, init);
  };
});
afterAll(() => {
  globalThis.fetch = realFetch;
});

let server: FakeLlmServer;
beforeEach(async () => {
  server = await startFakeLlmServer();
});
afterEach(async () => {
  await server.close();
});

const flows = bankFlows();
const conversation = () =>
  bankTracker([
    ['user', 'hello'],
    ['bot', 'Hi! How can I help?'],
  ]);

function generator(
  name: 'SingleStepLLMCommandGenerator' | 'CompactLLMCommandGenerator',
  config: Record<string, unknown> = {},
  env: Record<string, string> = {},
) {
  return LlmCommandGenerator.fromConfig(
    name,
    { llm: { model: 'gpt-test', api_base: server.apiBase, timeout: 2 }, ...config },
    { env },
  );
}

const predict = (g: LlmCommandGenerator, text: string, stack = new DialogueStack()) =>
  g.predictCommands({ text, tracker: conversation(), flows, stack, existingCommands: [] });

describe('LLM command generation against an OpenAI-compatible server', () => {
  it('sends a prompt with the flows and the conversation; the v1 answer becomes commands', async () => {
    server.configure({
      chat: (messages) =>
        messages[0]?.content.includes('USER: send 50 dollars to Jo')
          ? 'StartFlow(transfer_money)\nSetSlot(recipient, Jo)\nSetSlot(amount, 50)'
          : 'ChitChat()',
    });
    const result = await predict(
      generator('SingleStepLLMCommandGenerator'),
      'send 50 dollars to Jo',
    );
    expect(result.commands).toEqual([
      { command: 'start flow', flow: 'transfer_money' },
      { command: 'set slot', name: 'recipient', value: 'Jo', extractor: 'LLM' },
      { command: 'set slot', name: 'amount', value: '50', extractor: 'LLM' },
    ]);
    const [prompt] = server.prompts();
    expect(prompt).toContain('transfer_money: Send money to a friend or family member.');
    expect(prompt).toContain('check_balance: Show the balance of a bank account.');
    expect(prompt).toContain('USER: hello\nAI: Hi! How can I help?\nUSER: send 50 dollars to Jo');
    expect(result.flowsInPrompt).toEqual(
      expect.arrayContaining(['transfer_money', 'check_balance']),
    );
    expect(result.flowsFromSemanticSearch[0]?.[0]).toBe('transfer_money');
    const request = server.requests[0];
    expect(request?.path).toBe('/v1/chat/completions');
    expect(request?.body).toMatchObject({ model: 'gpt-test', temperature: 0 });
  });

  it('the compact generator speaks the v2 syntax', async () => {
    server.configure({ chat: () => '- start flow check_balance\n- set slot account_type savings' });
    const result = await predict(generator('CompactLLMCommandGenerator'), 'balance of my savings');
    expect(result.commands).toEqual([
      { command: 'start flow', flow: 'check_balance' },
      { command: 'set slot', name: 'account_type', value: 'savings', extractor: 'LLM' },
    ]);
    expect(server.prompts()[0]).toContain('`start flow flow_name`');
  });

  it('a user prompt_template replaces the default prompt', async () => {
    server.configure({ chat: () => 'HumanHandoff()' });
    const g = LlmCommandGenerator.fromConfig(
      'SingleStepLLMCommandGenerator',
      { llm: { api_base: server.apiBase }, prompt_template: 'custom.jinja2' },
      {
        env: {},
        readFile: () =>
          'Flows: {% for f in available_flows %}{{ f.name }} {% endfor %}| said: {{ user_message }}',
      },
    );
    const result = await predict(g, 'a human please');
    expect(result.commands).toEqual([{ command: 'human handoff' }]);
    expect(server.prompts()[0]).toMatch(/^Flows: (\w+ )+\| said: a human please$/);
  });

  it('sends the API key from the environment as a Bearer token', async () => {
    server.configure({ requireKey: 'sk-from-env', chat: () => 'ChitChat()' });
    const fromEnv = await predict(
      generator('SingleStepLLMCommandGenerator', {}, { OPENAI_API_KEY: 'sk-from-env' }),
      'hi',
    );
    expect(fromEnv.commands).toEqual([{ command: 'chitchat' }]);
    expect(server.requests[0]?.headers.authorization).toBe('Bearer sk-from-env');

    const fromReference = await predict(
      generator(
        'SingleStepLLMCommandGenerator',
        { llm: { api_base: server.apiBase, api_key: '${MY_LLM_KEY}' } },
        { MY_LLM_KEY: 'sk-from-env' },
      ),
      'hi',
    );
    expect(fromReference.commands).toEqual([{ command: 'chitchat' }]);

    const wrongKey = await predict(
      generator('SingleStepLLMCommandGenerator', {}, { OPENAI_API_KEY: 'sk-wrong' }),
      'hi',
    );
    expect(wrongKey.commands).toEqual([
      { command: 'error', error_type: 'rasa_internal_error_default', info: {} },
    ]);
  });

  it('a failing API gives the internal error command', async () => {
    server.configure({ failWithStatus: 500 });
    const result = await predict(generator('SingleStepLLMCommandGenerator'), 'hi');
    expect(result.commands).toEqual([
      { command: 'error', error_type: 'rasa_internal_error_default', info: {} },
    ]);
  });

  it('an API that is down gives the internal error command', async () => {
    // A port that was just free: nothing listens there.
    const probe = createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
    const { port } = probe.address() as AddressInfo;
    await new Promise<void>((r) => probe.close(() => r()));
    const g = LlmCommandGenerator.fromConfig(
      'SingleStepLLMCommandGenerator',
      { llm: { api_base: `http://127.0.0.1:${port}/v1` } },
      { env: {} },
    );
    expect((await predict(g, 'hi')).commands).toEqual([
      { command: 'error', error_type: 'rasa_internal_error_default', info: {} },
    ]);
  });

  it('an API slower than the timeout gives the internal error command', async () => {
    server.configure({ delayMs: 1500, chat: () => 'ChitChat()' });
    const g = generator('SingleStepLLMCommandGenerator', {
      llm: { api_base: server.apiBase, timeout: 0.2 },
    });
    const started = Date.now();
    expect((await predict(g, 'hi')).commands).toEqual([
      { command: 'error', error_type: 'rasa_internal_error_default', info: {} },
    ]);
    expect(Date.now() - started).toBeLessThan(1400);
  });

  it('an unparseable answer is cannot handle', async () => {
    server.configure({ chat: () => 'Sure! I will help you with that.' });
    expect((await predict(generator('SingleStepLLMCommandGenerator'), 'hi')).commands).toEqual([
      { command: 'cannot handle', reason: 'cannot_handle_default' },
    ]);
  });

  it('with an embeddings endpoint, retrieval embeds the flows once and the query every turn', async () => {
    server.configure({ chat: () => 'StartFlow(replace_card)' });
    const g = generator('SingleStepLLMCommandGenerator', {
      flow_retrieval: { num_flows: 2, embeddings: { model: 'emb-test', api_base: server.apiBase } },
    });
    const first = await predict(g, 'I lost my card');
    expect(first.commands).toEqual([{ command: 'start flow', flow: 'replace_card' }]);
    expect(first.flowsFromSemanticSearch).toHaveLength(2);
    const scores = first.flowsFromSemanticSearch.map(([, s]) => s);
    expect([...scores].sort((a, b) => b - a)).toEqual(scores);
    await predict(g, 'and my balance?');
    const embeddingCalls = server.requests.filter((r) => r.path === '/v1/embeddings');
    expect(embeddingCalls).toHaveLength(2);
    expect(embeddingCalls[0]?.body.input).toHaveLength(4);
    expect(embeddingCalls[1]?.body).toEqual({ model: 'emb-test', input: ['and my balance?'] });
  });

  it('an embeddings endpoint that fails gives the internal error command', async () => {
    server.configure({ failWithStatus: 503 });
    const g = generator('SingleStepLLMCommandGenerator', {
      flow_retrieval: { embeddings: { model: 'emb-test', api_base: server.apiBase } },
    });
    expect((await predict(g, 'hi')).commands).toEqual([
      { command: 'error', error_type: 'rasa_internal_error_default', info: {} },
    ]);
  });

  it('no call left the machine', () => {
    expect(fetched.length).toBeGreaterThan(0);
    expect(fetched.filter((u) => !u.startsWith('http://127.0.0.1:'))).toEqual([]);
  });
});
