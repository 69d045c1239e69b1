import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SHARED } from 'test/compat/shared';
import { startReceivingServer, type ReceivingServer } from 'test/utils/channels';
import { cli, startCliServer, type CliServer } from 'test/utils/cli';

/** Rasa's example bots, read from the folder beside the repository (see test/compat/README.md). */
export const SHARED_BOTS = join(SHARED, 'bots');

/**
 * The most epochs any component trains for in the compat suite. The bots' own configs ask for up
 * to 200 (TEDPolicy, DIETClassifier); the suite trains a temporary copy with `epochs` capped so
 * that all bots train in well under a minute each on 2 cores. The conversations below only use
 * phrases from (or very close to) the training data, which the capped models still classify.
 */
export const MAX_EPOCHS = 20;

/** A temporary copy of one example bot, with its config's epochs capped. */
export interface LiveBotFiles {
  readonly dir: string;
  readonly data: string;
  readonly domain: string;
  readonly config: string;
  /** The bot's test stories (`tests/test_stories.yml`), when it has them. */
  readonly testStories: string | null;
  remove(): void;
}

/**
 * Copies `shared/bots/<bot>` into a temporary folder, caps `epochs` in its config (MAX_EPOCHS)
 * and applies `edit` to the config text (for bots whose config needs a change to train at all).
 */
export function prepareBot(bot: string, edit: (config: string) => string = (c) => c): LiveBotFiles {
  const dir = mkdtempSync(join(tmpdir(), 'parley-compat-'));
  cpSync(join(SHARED_BOTS, bot), dir, { recursive: true });
  const config = join(dir, 'config.yml');
  const capped = readFileSync(config, 'utf8').replace(
    /epochs:\s*(\d+)/g,
    (_m, n: string) => `epochs: ${Math.min(Number(n), MAX_EPOCHS)}`,
  );
  writeFileSync(config, edit(capped));
  const tests = join(dir, 'tests', 'test_stories.yml');
  return {
    dir,
    data: join(dir, 'data'),
    domain: join(dir, 'domain.yml'),
    config,
    testStories: existsSync(tests) ? tests : null,
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** Removes the rule named `rule` (up to the next `- rule:` or the end) from data/rules.yml. */
export function dropRule(files: LiveBotFiles, rule: string): void {
  const path = join(files.data, 'rules.yml');
  const text = readFileSync(path, 'utf8');
  const start = text.indexOf(`- rule: ${rule}`);
  if (start < 0) throw new Error(`no rule '${rule}' in ${path}`);
  const next = text.indexOf('- rule:', start + 1);
  writeFileSync(path, text.slice(0, start) + (next < 0 ? '' : text.slice(next)));
}

/** `parley train` on a prepared bot: exit code, stderr and the models folder. */
export function trainLiveBot(bot: LiveBotFiles): {
  status: number | null;
  stderr: string;
  models: string;
} {
  const models = join(bot.dir, 'models');
  const r = cli(
    ['train', '--data', bot.data, '--domain', bot.domain, '--config', bot.config, '--out', models],
    {},
    180_000,
  );
  return { status: r.status, stderr: r.stderr, models };
}

/** `parley test core` on a trained bot: the summary it prints and its failed stories file. */
export function testCore(
  bot: LiveBotFiles,
  models: string,
  stories = bot.testStories ?? '',
): { status: number | null; stdout: string; stderr: string; failedStories: string } {
  const out = join(bot.dir, 'results');
  const r = cli(
    ['test', 'core', '--model', models, '--stories', stories, '--out', out],
    {},
    120_000,
  );
  const failed = join(out, 'failed_test_stories.yml');
  return {
    status: r.status,
    stdout: r.stdout,
    stderr: r.stderr,
    failedStories: existsSync(failed) ? readFileSync(failed, 'utf8') : '',
  };
}

/** A bot served by `parley run` with the rest and callback channels and an action server. */
export interface LiveBot {
  readonly server: CliServer;
  readonly base: string;
  /** The local server the callback channel POSTs the bot's messages to. */
  readonly receiver: ReceivingServer;
  close(): Promise<void>;
}

/**
 * Trains nothing: starts `parley run --model <models> --credentials <rest + callback>
 * --endpoints <action_endpoint>` on a free port, with a callback receiver on loopback.
 * `credentials` replaces the generated credentials.yml (the callback url is appended).
 */
export async function startLiveBot(
  bot: LiveBotFiles,
  models: string,
  actionServerUrl: string | null,
  credentials = 'rest:\n',
): Promise<LiveBot> {
  const receiver = await startReceivingServer();
  const credentialsFile = join(bot.dir, 'credentials.parley.yml');
  writeFileSync(credentialsFile, `${credentials}\ncallback:\n  url: "${receiver.url}/bot"\n`);
  const endpointsFile = join(bot.dir, 'endpoints.parley.yml');
  writeFileSync(
    endpointsFile,
    actionServerUrl ? `action_endpoint:\n  url: "${actionServerUrl}"\n` : '',
  );
  let server: CliServer;
  try {
    server = await startCliServer(
      ['--model', models, '--credentials', credentialsFile, '--endpoints', endpointsFile],
      { ...process.env, LOG_LEVEL: 'warn' },
    );
  } catch (error) {
    await receiver.close();
    throw error;
  }
  return {
    server,
    base: server.base,
    receiver,
    close: async () => {
      await server.stop();
      await receiver.close();
    },
  };
}

/** A bot message as a channel delivers it (REST answer item or callback POST body). */
export type BotMessage = Record<string, unknown>;

/** One user message over the REST channel: the bot's messages in the HTTP answer. */
export async function sayRest(
  bot: LiveBot,
  sender: string,
  message: string,
): Promise<BotMessage[]> {
  const res = await fetch(`${bot.base}/webhooks/rest/webhook`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ sender, message }),
  });
  if (res.status !== 200) {
    throw new Error(`REST webhook answered ${res.status}: ${await res.text()}`);
  }
  return (await res.json()) as BotMessage[];
}

/**
 * One user message over the callback channel: the webhook answers `success` once the message
 * is processed, by which time every bot message was POSTed to the receiver; returns those
 * addressed to `sender`.
 */
export async function sayCallback(
  bot: LiveBot,
  sender: string,
  message: string,
): Promise<BotMessage[]> {
  const before = bot.receiver.received.length;
  const res = await fetch(`${bot.base}/webhooks/callback/webhook`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ sender, message }),
  });
  const text = await res.text();
  if (res.status !== 200 || text !== 'success') {
    throw new Error(`callback webhook answered ${res.status}: ${text}`);
  }
  return bot.receiver.received
    .slice(before)
    .map((r) => r.body as BotMessage)
    .filter((m) => m.recipient_id === sender);
}

/**
 * Waits (at most `maxMs`, polling) until the receiver got a message for `sender` after the
 * first `after` requests; returns the messages for `sender` received so far after that point.
 */
export async function waitForCallback(
  bot: LiveBot,
  sender: string,
  after: number,
  maxMs: number,
): Promise<BotMessage[]> {
  const mine = () =>
    bot.receiver.received
      .slice(after)
      .map((r) => r.body as BotMessage)
      .filter((m) => m.recipient_id === sender);
  for (let waited = 0; waited < maxMs && mine().length === 0; waited += 100) {
    await new Promise((r) => setTimeout(r, 100));
  }
  return mine();
}

let counter = 0;
/** A conversation id unique in this run. */
export function sender(prefix: string): string {
  counter += 1;
  return `${prefix}-${process.pid}-${counter}`;
}

/** The channels every conversation is held over. */
export const CHANNELS = [
  { name: 'rest', say: sayRest },
  { name: 'callback', say: sayCallback },
] as const;

/**
 * Replaces a config's `pipeline:` block by Rasa's default pipeline (epochs capped). For bots
 * whose pipeline is built on spaCy models Parley cannot load: Parley would drop the spaCy
 * featurizer and leave DIET without features, as the bots' folder README recommends.
 */
export function withDefaultPipeline(config: string): string {
  const pipeline = [
    'pipeline:',
    '  - name: WhitespaceTokenizer',
    '  - name: RegexFeaturizer',
    '  - name: LexicalSyntacticFeaturizer',
    '  - name: CountVectorsFeaturizer',
    '  - name: CountVectorsFeaturizer',
    '    analyzer: char_wb',
    '    min_ngram: 1',
    '    max_ngram: 4',
    '  - name: DIETClassifier',
    `    epochs: ${MAX_EPOCHS}`,
    '  - name: EntitySynonymMapper',
    '',
  ].join('\n');
  return config.replace(/^pipeline:[\s\S]*?(?=^policies:)/m, pipeline);
}

/** A trained, running bot with the suite's action server; close() stops and removes all. */
export interface RunningBot extends LiveBot {
  readonly files: LiveBotFiles;
  readonly models: string;
}

/**
 * Prepares, trains (failing with the training output) and starts one bot (see prepareBot and
 * startLiveBot).
 */
export async function runBot(
  name: string,
  actionServerUrl: string | null,
  options: { edit?: (config: string) => string; credentials?: string; dropRule?: string } = {},
): Promise<RunningBot> {
  const files = prepareBot(name, options.edit);
  try {
    if (options.dropRule) dropRule(files, options.dropRule);
    const trained = trainLiveBot(files);
    if (trained.status !== 0) throw new Error(`training ${name} failed:\n${trained.stderr}`);
    const live = await startLiveBot(files, trained.models, actionServerUrl, options.credentials);
    return {
      ...live,
      files,
      models: trained.models,
      close: async () => {
        await live.close();
        files.remove();
      },
    };
  } catch (error) {
    files.remove();
    throw error;
  }
}
