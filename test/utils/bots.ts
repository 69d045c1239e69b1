import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { cli } from 'test/utils/cli';
import { FIXTURES, startTestApp, type TestApp } from 'test/utils/create-test-app';

/** The files `parley train` is given for one bot. */
export interface BotFiles {
  readonly data: readonly string[];
  readonly domain: string;
  readonly config: string;
}

/** The files of a bot folder laid out as Rasa's (data/, domain.yml), with its config file. */
export function botFiles(bot: string, config = join(bot, 'config.yml')): BotFiles {
  return { data: [join(bot, 'data')], domain: join(bot, 'domain.yml'), config };
}

export const MOODBOT_DIR = join(FIXTURES, 'moodbot');

/** The test mood bot (test/fixtures/moodbot) with its well-trained config (NLU + policies). */
export const MOODBOT = botFiles(MOODBOT_DIR, join(MOODBOT_DIR, 'config.full.yml'));
/** A bike shop bot answering retrieval intents (faq/*) with a ResponseSelector. */
export const RESPONSESELECTORBOT_DIR = join(FIXTURES, 'responseselectorbot');
export const RESPONSESELECTORBOT = botFiles(RESPONSESELECTORBOT_DIR);
/** A hotel booking bot with a form validated by a custom action (validate_booking_form). */
export const FORMBOT_DIR = join(FIXTURES, 'formbot');
export const FORMBOT = botFiles(FORMBOT_DIR);
/** A bike workshop CALM bot: two NLU-triggered flows (NLUCommandAdapter, FlowPolicy). */
export const FLOWSBOT_DIR = join(FIXTURES, 'flowsbot');
export const FLOWSBOT = botFiles(FLOWSBOT_DIR);

/** Trains `bot` with `parley train` into `out` and returns `out` (a models directory). */
export function trainBot(bot: BotFiles, out: string): string {
  const trained = cli(
    ['train', '--data', ...bot.data, '--domain', bot.domain, '--config', bot.config, '--out', out],
    {},
    120_000,
  );
  if (trained.status !== 0) throw new Error(`training failed: ${trained.stderr}`);
  return out;
}

/** Starts a test app and loads the models in `modelDir` through PUT /model. */
export async function startAppWithModel(
  modelDir: string,
  options: Parameters<typeof startTestApp>[0] = {},
): Promise<TestApp> {
  const t = await startTestApp(options);
  try {
    await request(t.url).put('/model').send({ model_file: modelDir }).expect(204);
  } catch (error) {
    await t.close();
    throw error;
  }
  return t;
}

/** A test app serving a bot trained into its own temporary folder `dir` (models in dir/models). */
export interface TrainedBotApp extends TestApp {
  readonly dir: string;
}

/**
 * Trains `bot` into a fresh temporary folder (named after `prefix`), starts a test app and loads
 * the model through PUT /model; close() stops the app and removes the folder.
 */
export async function startAppWithTrainedBot(
  bot: BotFiles,
  prefix: string,
  options: Parameters<typeof startTestApp>[0] = {},
): Promise<TrainedBotApp> {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const remove = () => rmSync(dir, { recursive: true, force: true });
  try {
    const t = await startAppWithModel(trainBot(bot, join(dir, 'models')), options);
    return {
      ...t,
      dir,
      close: async () => {
        await t.close();
        remove();
      },
    };
  } catch (error) {
    remove();
    throw error;
  }
}

/** POST /model/test/stories?<query> with the YAML of `file`, expecting 200. */
export function postTestStories(url: string, file: string, query = ''): Promise<request.Response> {
  return request(url)
    .post(`/model/test/stories${query}`)
    .set('Content-Type', 'application/x-yaml')
    .send(readFileSync(file, 'utf8'))
    .expect(200);
}

/** One message on the REST channel (`POST /webhooks/rest/webhook`, expecting 200): the bot's messages. */
export async function sayRest(
  url: string,
  sender: string,
  message: string,
): Promise<Record<string, unknown>[]> {
  const res = await request(url)
    .post('/webhooks/rest/webhook')
    .send({ sender, message })
    .expect(200);
  return res.body as Record<string, unknown>[];
}

/** The texts of the bot's messages for one REST-channel message (see sayRest). */
export async function sayRestTexts(
  url: string,
  sender: string,
  message: string,
): Promise<unknown[]> {
  return (await sayRest(url, sender, message)).map((m) => m.text);
}
