import { readFileSync } from 'node:fs';
import {
  CANNOT_HANDLE_DEFAULT,
  type Command,
  INTERNAL_ERROR_DEFAULT,
  USER_INPUT_EMPTY,
  USER_INPUT_TOO_LONG,
} from 'src/core/flows/commands';
import { type Flow } from 'src/core/flows/flow';
import { FlowsList } from 'src/core/flows/flows-list';
import { renderTemplate } from 'src/core/flows/jinja';
import { type CommandSyntax, parseCommandDsl } from 'src/core/flows/llm/command-dsl';
import {
  DEFAULT_FLOW_RETRIEVAL,
  type EmbeddingsConfig,
  FlowRetrieval,
  type FlowRetrievalConfig,
  type ScoredFlow,
} from 'src/core/flows/llm/flow-retrieval';
import {
  buildPromptInputs,
  DEFAULT_PROMPT_TEMPLATE_V1,
  DEFAULT_PROMPT_TEMPLATE_V2,
  renderPrompt,
} from 'src/core/flows/llm/prompt';
import { evaluatePredicate } from 'src/core/flows/predicate';
import { type DialogueStack } from 'src/core/flows/stack';
import { type DialogueStateTracker } from 'src/core/tracker/dialogue-state-tracker';
import { postOpenAi } from './openai-http';

/**
 * LLM command generators (Rasa Pro's `SingleStepLLMCommandGenerator` / `LLMCommandGenerator`
 * with the v1 action syntax, `CompactLLMCommandGenerator` with the v2 one), calling an
 * OpenAI-compatible chat-completions API.
 */

export const LLM_GENERATOR_NAMES = [
  'SingleStepLLMCommandGenerator',
  'LLMCommandGenerator',
  'CompactLLMCommandGenerator',
] as const;
export type LlmGeneratorName = (typeof LLM_GENERATOR_NAMES)[number];

export function isLlmGeneratorName(name: string): name is LlmGeneratorName {
  return (LLM_GENERATOR_NAMES as readonly string[]).includes(name);
}

export const DEFAULT_OPENAI_API_BASE = 'https://api.openai.com/v1';
export const DEFAULT_MAX_CHARACTERS = 420;
export const DEFAULT_LLM_TIMEOUT_SECONDS = 7;

export interface LlmSettings {
  readonly model: string;
  readonly apiBase: string;
  readonly provider: string;
  readonly apiKey: string | null;
  readonly timeoutMs: number;
  readonly temperature: number;
  readonly maxTokens: number | null;
}

export interface LlmGeneratorSettings {
  readonly name: LlmGeneratorName;
  readonly syntax: CommandSyntax;
  readonly llm: LlmSettings;
  /** The prompt template's text (the file's, or Parley's default for the syntax). */
  readonly promptTemplate: string;
  /** Negative: no limit. */
  readonly maxCharacters: number;
  readonly flowRetrieval: FlowRetrievalConfig;
}

/** A configuration that cannot be used (unknown key types, a missing environment variable). */
export class LlmGeneratorConfigError extends Error {}

export interface LlmGeneratorOptions {
  /** The environment (`OPENAI_API_KEY`, `${VAR}` references); default `process.env`. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Reads the `prompt_template` file; default `fs.readFileSync(path, 'utf8')`. */
  readonly readFile?: (path: string) => string;
  /** Resolves a relative `prompt_template` path (e.g. against the project directory). */
  readonly resolvePath?: (path: string) => string;
  readonly fetch?: typeof fetch;
}

function record(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};
}

function optionalString(value: unknown): string | null {
  return typeof value === 'string' && value.trim() !== '' ? value : null;
}

function optionalNumber(value: unknown): number | null {
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  if (typeof value === 'string' && value.trim() !== '' && Number.isFinite(Number(value))) {
    return Number(value);
  }
  return null;
}

/** `${VAR}` → the variable's value (an error when unset); anything else as given. */
export function resolveEnvReference(
  value: string,
  env: Readonly<Record<string, string | undefined>>,
  what: string,
): string {
  const m = /^\$\{([A-Za-z_][A-Za-z0-9_]*)\}$/.exec(value.trim());
  if (m === null) return value;
  const resolved = env[m[1] as string];
  if (resolved === undefined || resolved === '') {
    throw new LlmGeneratorConfigError(
      `${what} refers to the environment variable ${m[1]}, which is not set.`,
    );
  }
  return resolved;
}

function llmSettings(
  raw: Record<string, unknown>,
  env: Readonly<Record<string, string | undefined>>,
  defaultModel: string,
): LlmSettings {
  const apiKeyRaw = optionalString(raw.api_key);
  const apiKey =
    apiKeyRaw !== null
      ? resolveEnvReference(apiKeyRaw, env, 'llm.api_key')
      : (optionalString(env.OPENAI_API_KEY) ?? null);
  const apiBaseRaw =
    optionalString(raw.api_base) ?? optionalString(raw.base_url) ?? DEFAULT_OPENAI_API_BASE;
  const timeout =
    optionalNumber(raw.timeout) ??
    optionalNumber(raw.request_timeout) ??
    DEFAULT_LLM_TIMEOUT_SECONDS;
  let model = optionalString(raw.model) ?? optionalString(raw.model_name) ?? defaultModel;
  const provider = optionalString(raw.provider) ?? 'openai';
  // `openai/gpt-4o` style names carry the provider.
  if (model.startsWith(`${provider}/`)) model = model.slice(provider.length + 1);
  return {
    model,
    apiBase: resolveEnvReference(apiBaseRaw, env, 'llm.api_base').replace(/\/+$/, ''),
    provider,
    apiKey,
    timeoutMs: Math.max(1, timeout * 1000),
    temperature: optionalNumber(raw.temperature) ?? 0,
    maxTokens: optionalNumber(raw.max_tokens) ?? optionalNumber(raw.max_completion_tokens),
  };
}

function embeddingsSettings(
  raw: unknown,
  env: Readonly<Record<string, string | undefined>>,
): EmbeddingsConfig | null {
  const r = record(raw);
  const apiBase = optionalString(r.api_base) ?? optionalString(r.base_url);
  // Without an explicit endpoint, retrieval stays offline (BM25): no call leaves the machine.
  if (apiBase === null) return null;
  const apiKeyRaw = optionalString(r.api_key);
  return {
    model: optionalString(r.model) ?? optionalString(r.model_name) ?? 'text-embedding-ada-002',
    apiBase: resolveEnvReference(apiBase, env, 'flow_retrieval.embeddings.api_base').replace(
      /\/+$/,
      '',
    ),
    apiKey:
      apiKeyRaw !== null
        ? resolveEnvReference(apiKeyRaw, env, 'flow_retrieval.embeddings.api_key')
        : (optionalString(env.OPENAI_API_KEY) ?? null),
    timeoutMs: Math.max(1, (optionalNumber(r.timeout) ?? DEFAULT_LLM_TIMEOUT_SECONDS) * 1000),
  };
}

/** Reads a generator's pipeline entry (Rasa's keys) into settings. */
export function llmGeneratorSettings(
  name: LlmGeneratorName,
  config: Record<string, unknown>,
  options: LlmGeneratorOptions = {},
): LlmGeneratorSettings {
  const env = options.env ?? process.env;
  const syntax: CommandSyntax = name === 'CompactLLMCommandGenerator' ? 'v2' : 'v1';
  const defaultModel = syntax === 'v2' ? 'gpt-4o-2024-11-20' : 'gpt-4-0613';
  const templatePath = optionalString(config.prompt_template) ?? optionalString(config.prompt);
  let promptTemplate = syntax === 'v2' ? DEFAULT_PROMPT_TEMPLATE_V2 : DEFAULT_PROMPT_TEMPLATE_V1;
  if (templatePath !== null) {
    const path = options.resolvePath ? options.resolvePath(templatePath) : templatePath;
    try {
      promptTemplate = (options.readFile ?? ((p: string) => readFileSync(p, 'utf8')))(path);
    } catch (e) {
      throw new LlmGeneratorConfigError(
        `Cannot read the prompt template '${templatePath}': ${e instanceof Error ? e.message : String(e)}`,
      );
    }
  }
  const userInput = record(config.user_input);
  const retrieval = record(config.flow_retrieval);
  return {
    name,
    syntax,
    llm: llmSettings(record(config.llm), env, defaultModel),
    promptTemplate,
    maxCharacters: optionalNumber(userInput.max_characters) ?? DEFAULT_MAX_CHARACTERS,
    flowRetrieval: {
      active: retrieval.active === undefined ? true : retrieval.active !== false,
      numFlows: optionalNumber(retrieval.num_flows) ?? DEFAULT_FLOW_RETRIEVAL.numFlows,
      turnsToEmbed: optionalNumber(retrieval.turns_to_embed) ?? DEFAULT_FLOW_RETRIEVAL.turnsToEmbed,
      shouldEmbedSlots: retrieval.should_embed_slots !== false,
      embeddings: embeddingsSettings(retrieval.embeddings, env),
    },
  };
}

export interface PredictCommandsInput {
  /** The new message's text. */
  readonly text: string | null;
  /** The conversation before the new message. */
  readonly tracker: DialogueStateTracker;
  /** All flows of the assistant (user flows and patterns). */
  readonly flows: FlowsList;
  readonly stack: DialogueStack;
  /** Commands an earlier generator already produced for this message. */
  readonly existingCommands: readonly Command[];
}

export interface PredictCommandsResult {
  /**
   * The commands for `parse_data.commands`. When `existingCommands` were given they are
   * returned unchanged (the generator does nothing).
   */
  readonly commands: Command[];
  /** User flow ids offered to the LLM (`flows_in_prompt`). */
  readonly flowsInPrompt: string[];
  /** `[flow id, score]`, best first (`flows_from_semantic_search`). */
  readonly flowsFromSemanticSearch: ScoredFlow[];
  /** The prompt sent, when one was. */
  readonly prompt: string | null;
}

/** The chat-completions call failed or answered nothing usable. */
export class LlmCallError extends Error {}

/** Whether a flow may start now: no guard, a guard that holds, or the flow is active. */
export function isStartable(
  flow: Flow,
  stack: DialogueStack,
  slots: Record<string, unknown>,
): boolean {
  if (flow.guard === null) return true;
  const context = stack.context();
  if (context.flow_id === flow.id) return true;
  let rendered: string;
  try {
    rendered = renderTemplate(flow.guard, { context });
  } catch {
    return false;
  }
  return evaluatePredicate(rendered, { context, slots });
}

export class LlmCommandGenerator {
  private readonly retrieval: FlowRetrieval;
  private readonly fetchImpl: typeof fetch;

  constructor(
    readonly settings: LlmGeneratorSettings,
    options: Pick<LlmGeneratorOptions, 'fetch'> = {},
  ) {
    this.fetchImpl = options.fetch ?? ((...args) => fetch(...args));
    this.retrieval = new FlowRetrieval(settings.flowRetrieval, this.fetchImpl);
  }

  static fromConfig(
    name: LlmGeneratorName,
    config: Record<string, unknown>,
    options: LlmGeneratorOptions = {},
  ): LlmCommandGenerator {
    return new LlmCommandGenerator(llmGeneratorSettings(name, config, options), options);
  }

  async predictCommands(input: PredictCommandsInput): Promise<PredictCommandsResult> {
    const none = (commands: Command[], prompt: string | null = null): PredictCommandsResult => ({
      commands,
      flowsInPrompt: [],
      flowsFromSemanticSearch: [],
      prompt,
    });
    if (input.existingCommands.length > 0) return none([...input.existingCommands]);
    const text = input.text ?? '';
    if (text.trim() === '') {
      return none([{ command: 'error', error_type: USER_INPUT_EMPTY, info: {} }]);
    }
    const max = this.settings.maxCharacters;
    if (max >= 0 && text.length > max) {
      return none([
        { command: 'error', error_type: USER_INPUT_TOO_LONG, info: { max_characters: max } },
      ]);
    }
    if (input.flows.isEmpty) return none([]);
    try {
      return await this.predict(input, text);
    } catch (e) {
      if (e instanceof LlmCallError) {
        return none([{ command: 'error', error_type: INTERNAL_ERROR_DEFAULT, info: {} }]);
      }
      // Any other failure inside a generator: no commands, as in Rasa.
      return none([]);
    }
  }

  private async predict(input: PredictCommandsInput, text: string): Promise<PredictCommandsResult> {
    const { tracker, flows, stack } = input;
    const slots = tracker.slotValuesObject();
    const activeIds = new Set(stack.userFlowIds());
    const startable = flows.userFlows.filter(
      (f) => activeIds.has(f.id) || isStartable(f, stack, slots),
    );

    let flowsFromSemanticSearch: ScoredFlow[] = [];
    let inPrompt: Flow[] = startable.filter((f) => f.guard !== 'false');
    if (this.settings.flowRetrieval.active) {
      try {
        flowsFromSemanticSearch = await this.retrieval.rank(startable, flows, tracker, text);
      } catch (e) {
        throw new LlmCallError(e instanceof Error ? e.message : String(e));
      }
      const chosen = new Set(flowsFromSemanticSearch.map(([id]) => id));
      const started = new Set(activeIds);
      for (const e of tracker.appliedEvents()) {
        if (e.type === 'flow_started' && e.flowId !== null) started.add(e.flowId);
      }
      inPrompt = startable.filter(
        (f) => f.alwaysIncludeInPrompt === true || started.has(f.id) || chosen.has(f.id),
      );
    }

    const prompt = renderPrompt(
      this.settings.promptTemplate,
      buildPromptInputs({ text, tracker, flows, flowsInPrompt: inPrompt, stack }),
    );
    const answer = await this.complete(prompt);
    let commands = parseCommandDsl(answer, new FlowsList(startable), this.settings.syntax);
    if (commands.length === 0) {
      commands = [{ command: 'cannot handle', reason: CANNOT_HANDLE_DEFAULT }];
    }
    const startableIds = new Set(startable.map((f) => f.id));
    commands = commands.filter((c) => c.command !== 'start flow' || startableIds.has(c.flow));
    return {
      commands,
      flowsInPrompt: inPrompt.map((f) => f.id),
      flowsFromSemanticSearch,
      prompt,
    };
  }

  /** One chat-completions call; the answer's text. */
  private async complete(prompt: string): Promise<string> {
    const llm = this.settings.llm;
    const body: Record<string, unknown> = {
      model: llm.model,
      messages: [{ role: 'user', content: prompt }],
      temperature: llm.temperature,
    };
    if (llm.maxTokens !== null) body.max_tokens = llm.maxTokens;
    const json = await postOpenAi(
      this.fetchImpl,
      llm,
      'chat/completions',
      body,
      (message) => new LlmCallError(message),
      'LLM endpoint',
    );
    const choices = (json as { choices?: unknown }).choices;
    const first = Array.isArray(choices)
      ? (choices[0] as { message?: { content?: unknown } })
      : null;
    const content = first?.message?.content;
    if (typeof content !== 'string') {
      throw new LlmCallError('The LLM endpoint answered without a message.');
    }
    return content;
  }
}
