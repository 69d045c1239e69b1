import { FlowsList } from 'src/core/flows/flows-list';
import {
  LlmCommandGenerator,
  LlmGeneratorConfigError,
  llmGeneratorSettings,
} from 'src/core/flows/llm/llm-command-generator';
import { bankFlows, bankTracker, testFlow } from 'src/core/flows/llm/llm-fixtures';
import { DEFAULT_PROMPT_TEMPLATE_V1, DEFAULT_PROMPT_TEMPLATE_V2 } from 'src/core/flows/llm/prompt';
import { DialogueStack } from 'src/core/flows/stack';

/** A fetch that answers chat completions with `answer` and records the prompts. */
function fakeFetch(answer: string | (() => never)) {
  const prompts: string[] = [];
  const impl = (async (_url: string | URL | Request, init?: RequestInit) => {
    await Promise.resolve();
    const body = JSON.parse(init?.body as string) as { messages: { content: string }[] };
    prompts.push(body.messages[0]?.content ?? '');
    const content = typeof answer === 'string' ? answer : answer();
    return new Response(
      JSON.stringify({ choices: [{ message: { role: 'assistant', content } }] }),
      {
        status: 200,
        headers: { 'content-type': 'application/json' },
      },
    );
  }) as typeof fetch;
  return { impl, prompts };
}

const input = (
  text: string | null,
  extra: Partial<Parameters<LlmCommandGenerator['predictCommands']>[0]> = {},
) => ({
  text,
  tracker: bankTracker(),
  flows: bankFlows(),
  stack: new DialogueStack(),
  existingCommands: [],
  ...extra,
});

describe('llmGeneratorSettings', () => {
  it("reads Rasa's keys with defaults", () => {
    const s = llmGeneratorSettings('SingleStepLLMCommandGenerator', {}, { env: {} });
    expect(s.syntax).toBe('v1');
    expect(s.promptTemplate).toBe(DEFAULT_PROMPT_TEMPLATE_V1);
    expect(s.maxCharacters).toBe(420);
    expect(s.llm).toMatchObject({
      apiBase: 'https://api.openai.com/v1',
      apiKey: null,
      timeoutMs: 7000,
    });
    expect(s.flowRetrieval).toEqual({
      active: true,
      numFlows: 20,
      turnsToEmbed: 1,
      shouldEmbedSlots: true,
      embeddings: null,
    });
    const compact = llmGeneratorSettings('CompactLLMCommandGenerator', {}, { env: {} });
    expect(compact.syntax).toBe('v2');
    expect(compact.promptTemplate).toBe(DEFAULT_PROMPT_TEMPLATE_V2);
    expect(llmGeneratorSettings('LLMCommandGenerator', {}, { env: {} }).syntax).toBe('v1');
  });

  it('takes llm, user_input, flow_retrieval and prompt_template', () => {
    const s = llmGeneratorSettings(
      'SingleStepLLMCommandGenerator',
      {
        llm: {
          provider: 'openai',
          model: 'openai/gpt-4o',
          api_base: 'http://127.0.0.1:1/v1/',
          timeout: 2,
          temperature: 0.2,
          max_tokens: 99,
        },
        user_input: { max_characters: -1 },
        flow_retrieval: {
          active: false,
          num_flows: 3,
          turns_to_embed: 2,
          embeddings: { model: 'e', api_base: 'http://127.0.0.1:1/v1' },
        },
        prompt_template: 'prompts/mine.jinja2',
      },
      { env: { OPENAI_API_KEY: 'sk-env' }, readFile: (p) => `template from ${p}` },
    );
    expect(s.llm).toEqual({
      model: 'gpt-4o',
      apiBase: 'http://127.0.0.1:1/v1',
      provider: 'openai',
      apiKey: 'sk-env',
      timeoutMs: 2000,
      temperature: 0.2,
      maxTokens: 99,
    });
    expect(s.maxCharacters).toBe(-1);
    expect(s.flowRetrieval).toMatchObject({ active: false, numFlows: 3, turnsToEmbed: 2 });
    expect(s.flowRetrieval.embeddings).toMatchObject({
      model: 'e',
      apiBase: 'http://127.0.0.1:1/v1',
      apiKey: 'sk-env',
    });
    expect(s.promptTemplate).toBe('template from prompts/mine.jinja2');
  });

  it('api_key as ${VAR} reads the environment; an unset variable is a config error', () => {
    const s = llmGeneratorSettings(
      'SingleStepLLMCommandGenerator',
      { llm: { api_key: '${MY_KEY}' } },
      { env: { MY_KEY: 'k1', OPENAI_API_KEY: 'other' } },
    );
    expect(s.llm.apiKey).toBe('k1');
    expect(() =>
      llmGeneratorSettings(
        'SingleStepLLMCommandGenerator',
        { llm: { api_key: '${NOPE}' } },
        { env: {} },
      ),
    ).toThrow(LlmGeneratorConfigError);
  });

  it('an unreadable prompt template is a config error', () => {
    expect(() =>
      llmGeneratorSettings(
        'SingleStepLLMCommandGenerator',
        { prompt_template: 'x' },
        {
          env: {},
          readFile: () => {
            throw new Error('ENOENT');
          },
        },
      ),
    ).toThrow(/Cannot read the prompt template 'x'/);
  });
});

describe('LlmCommandGenerator.predictCommands', () => {
  const make = (answer: string | (() => never), config: Record<string, unknown> = {}) => {
    const fetch = fakeFetch(answer);
    const generator = LlmCommandGenerator.fromConfig(
      'SingleStepLLMCommandGenerator',
      { llm: { api_base: 'http://127.0.0.1:9/v1' }, ...config },
      { env: {}, fetch: fetch.impl },
    );
    return { generator, prompts: fetch.prompts };
  };

  it('existing commands: does nothing, calls nobody', async () => {
    const { generator, prompts } = make('StartFlow(transfer_money)');
    const existing = [{ command: 'start flow' as const, flow: 'check_balance' }];
    const result = await generator.predictCommands(input('hi', { existingCommands: existing }));
    expect(result.commands).toEqual(existing);
    expect(prompts).toEqual([]);
  });

  it('empty and too long messages are errors without a call', async () => {
    const { generator, prompts } = make('StartFlow(transfer_money)', {
      user_input: { max_characters: 5 },
    });
    expect((await generator.predictCommands(input('  '))).commands).toEqual([
      { command: 'error', error_type: 'rasa_internal_error_user_input_empty', info: {} },
    ]);
    expect((await generator.predictCommands(input(null))).commands).toEqual([
      { command: 'error', error_type: 'rasa_internal_error_user_input_empty', info: {} },
    ]);
    expect((await generator.predictCommands(input('123456'))).commands).toEqual([
      {
        command: 'error',
        error_type: 'rasa_internal_error_user_input_too_long',
        info: { max_characters: 5 },
      },
    ]);
    expect(prompts).toEqual([]);
  });

  it('a negative max_characters disables the length check', async () => {
    const { generator } = make('ChitChat()', { user_input: { max_characters: -1 } });
    expect((await generator.predictCommands(input('x'.repeat(1000)))).commands).toEqual([
      { command: 'chitchat' },
    ]);
  });

  it('no flows: no commands, no call', async () => {
    const { generator, prompts } = make('ChitChat()');
    expect(
      (await generator.predictCommands(input('hi', { flows: FlowsList.empty() }))).commands,
    ).toEqual([]);
    expect(prompts).toEqual([]);
  });

  it('parses the answer; nothing parseable is cannot handle', async () => {
    const ok = make('StartFlow(transfer_money)\nSetSlot(recipient, Jo)');
    const result = await ok.generator.predictCommands(input('send money to Jo'));
    expect(result.commands).toEqual([
      { command: 'start flow', flow: 'transfer_money' },
      { command: 'set slot', name: 'recipient', value: 'Jo', extractor: 'LLM' },
    ]);
    expect(result.flowsInPrompt[0]).toBe('transfer_money');
    expect(result.flowsFromSemanticSearch[0]?.[0]).toBe('transfer_money');
    const vague = make('I am not sure.');
    expect((await vague.generator.predictCommands(input('hm'))).commands).toEqual([
      { command: 'cannot handle', reason: 'cannot_handle_default' },
    ]);
  });

  it('guards: a flow whose guard fails is neither offered nor started', async () => {
    const flows = new FlowsList([
      testFlow('vip_desk', 'Talk to the VIP desk.', [], { guard: 'slots.confirm = true' }),
      testFlow('replace_card', 'Order a replacement card.'),
    ]);
    const { generator, prompts } = make('StartFlow(vip_desk)');
    const result = await generator.predictCommands(input('vip desk please', { flows }));
    expect(result.flowsInPrompt).toEqual(['replace_card']);
    expect(prompts[0]).not.toContain('vip_desk');
    expect(result.commands).toEqual([
      { command: 'cannot handle', reason: 'cannot_handle_default' },
    ]);
    const allowed = await generator.predictCommands(
      input('vip desk please', { flows, tracker: bankTracker([], { confirm: true }) }),
    );
    expect(allowed.commands).toEqual([{ command: 'start flow', flow: 'vip_desk' }]);
  });

  it('retrieval off: every startable user flow is offered, no search results', async () => {
    const { generator } = make('ChitChat()', { flow_retrieval: { active: false } });
    const result = await generator.predictCommands(input('hi'));
    expect(result.flowsInPrompt).toEqual(['transfer_money', 'check_balance', 'replace_card']);
    expect(result.flowsFromSemanticSearch).toEqual([]);
  });

  it('retrieval keeps num_flows plus always-included and active flows', async () => {
    const flows = new FlowsList([
      testFlow('transfer_money', 'Send money to a friend.'),
      testFlow('check_balance', 'Show the balance of an account.'),
      testFlow('faq', 'Answer questions.', [], { alwaysIncludeInPrompt: true }),
      testFlow('replace_card', 'Order a replacement card.'),
    ]);
    const stack = new DialogueStack([
      {
        frame_id: 'A',
        flow_id: 'replace_card',
        step_id: 'START',
        frame_type: 'regular',
        type: 'flow',
      },
    ]);
    const { generator } = make('ChitChat()', { flow_retrieval: { num_flows: 1 } });
    const result = await generator.predictCommands(input('what is my balance', { flows, stack }));
    expect(result.flowsFromSemanticSearch.map(([id]) => id)).toEqual(['check_balance']);
    expect(result.flowsInPrompt).toEqual(['check_balance', 'faq', 'replace_card']);
  });

  it('an exception while building the prompt gives no commands', async () => {
    const broken = LlmCommandGenerator.fromConfig(
      'SingleStepLLMCommandGenerator',
      { prompt_template: 'bad.jinja2' },
      { env: {}, readFile: () => '{% if %}', fetch: fakeFetch('ChitChat()').impl },
    );
    expect((await broken.predictCommands(input('hi'))).commands).toEqual([]);
  });
});
