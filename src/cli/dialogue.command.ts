import { mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { extname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { type Readable, type Writable } from 'node:stream';
import {
  botMessageOf,
  CollectingOutputChannel,
  DialogueProcessor,
  DialogueStateTracker,
  evaluateStories,
  parseTextAwaitable,
  readStoriesYaml,
  startSession,
  storyTextParser,
  trainingTrackers,
  type ActionEndpoint,
  type DialogueEvent,
  type JsonObject,
  type LoadedAssistant,
  type NlgServer,
  type StoryEvaluation,
  type StoryOutcome,
  type TrainingTracker,
} from 'src/core';
import { readDialogueEndpoints } from 'src/modules/engine';
import { loadModelArchive, resolveModelPath } from 'src/modules/model/sources/model-loader';
import { PARLEY_VERSION } from 'src/platform/config/version';
import { noModelMessage } from './messages';

/** Options of `parley test core`. */
export interface TestCoreOptions {
  model?: string;
  stories?: string;
  out?: string;
  e2e?: boolean;
}

/** Options of `parley shell`. */
export interface ShellOptions {
  model?: string;
  endpoints?: string;
  sender?: string;
}

/** The model of `--model` (default models/: the newest archive), as `parley shell` loads it. */
export async function loadCliAssistant(
  model: string | undefined,
): Promise<{ path: string; assistant: LoadedAssistant }> {
  const requested = model ?? 'models';
  const path = await resolveModelPath(resolve(requested));
  if (path === null) throw new Error(noModelMessage(requested));
  return { path, assistant: await loadModelArchive(path) };
}

async function yamlFiles(path: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (p: string, explicit: boolean): Promise<void> => {
    const info = await stat(p);
    if (info.isDirectory()) {
      for (const entry of (await readdir(p)).sort()) {
        if (!entry.startsWith('.')) await walk(join(p, entry), false);
      }
    } else if (explicit || ['.yml', '.yaml'].includes(extname(p).toLowerCase())) out.push(p);
  };
  await walk(path, true);
  return out.sort();
}

/**
 * `parley test core`: replays the test stories (default `tests/`) against the model and writes
 * `story_report.json` (classification report + conversation accuracy),
 * `failed_test_stories.yml` (with `# predicted:` comments) and `successful_test_stories.yml`.
 */
export async function testCore(
  opts: TestCoreOptions,
): Promise<{ evaluation: StoryEvaluation; outcomes: StoryOutcome[]; files: string[] }> {
  const { assistant } = await loadCliAssistant(opts.model);
  if (!assistant.policies) throw new Error('the model has no dialogue policies (NLU-only model)');
  const storiesPath = opts.stories ?? 'tests';
  try {
    await stat(storiesPath);
  } catch {
    throw new Error(
      opts.stories === undefined
        ? `no test stories: the default folder ${resolve(storiesPath)} does not exist; pass --stories <file or folder>`
        : `no test stories: ${storiesPath} does not exist`,
    );
  }
  const stories: TrainingTracker[] = [];
  for (const file of await yamlFiles(storiesPath)) {
    const { blocks } = readStoriesYaml(await readFile(file, 'utf8'), file);
    stories.push(
      ...trainingTrackers(
        blocks.filter((b) => !b.isRule),
        assistant.domain,
      ),
    );
  }
  if (stories.length === 0) throw new Error(`no test stories found in ${opts.stories ?? 'tests'}`);
  const processor = new DialogueProcessor(assistant.domain, assistant.policies, {
    endpoint: null,
    now: () => Date.now() / 1000,
  });
  // End to end, each user text is parsed ahead with every component (a Duckling server too).
  const parsed = opts.e2e
    ? await storyTextParser(assistant.nlu, stories, {
        onWarning: (m) => process.stderr.write(`warning: ${m}\n`),
      })
    : null;
  const parse =
    parsed === null ? null : (text: string): JsonObject => parsed(text) as unknown as JsonObject;
  const { evaluation, outcomes } = evaluateStories(processor, stories, parse);
  const out = opts.out ?? 'results';
  await mkdir(out, { recursive: true });
  const files = ['story_report.json', 'failed_test_stories.yml', 'successful_test_stories.yml'];
  await writeFile(join(out, files[0] as string), `${JSON.stringify(evaluation.report, null, 2)}\n`);
  const byName = new Map(stories.map((s) => [s, s]));
  const yamlOf = (correct: boolean): string => {
    const chosen = outcomes
      .map((o, i) => ({ o, story: stories[i] as TrainingTracker }))
      .filter(({ o }) => o.correct === correct);
    if (chosen.length === 0) {
      return '# None of the test stories ' + (correct ? 'succeeded.\n' : 'failed - all good!\n');
    }
    return `version: "3.1"\nstories:\n${chosen.map(({ o, story }) => storyYaml(o, byName.get(story) ?? story)).join('')}`;
  };
  await writeFile(join(out, files[1] as string), yamlOf(false));
  await writeFile(join(out, files[2] as string), yamlOf(true));
  return { evaluation, outcomes, files };
}

function storyYaml(outcome: StoryOutcome, story: TrainingTracker): string {
  const lines = [
    `- story: ${JSON.stringify(story.name)}  # ${story.file}:${story.line ?? '?'}`,
    '  steps:',
  ];
  let k = 0;
  story.events.forEach((e: DialogueEvent, index) => {
    if (e.type === 'user') {
      const intent = typeof e.intent.name === 'string' ? e.intent.name : null;
      if (intent) lines.push(`  - intent: ${intent}`);
      if (e.text) lines.push(`${intent ? '    ' : '  - '}user: ${JSON.stringify(e.text)}`);
      const wrong = outcome.nluErrors.find(([text]) => text === e.text);
      // One comment line, whatever line breaks the text has.
      const found = wrong?.[3].replace(/\s+/g, ' ').trim();
      if (wrong) lines[lines.length - 1] += `  # predicted: ${wrong[2]}: ${found}`;
    } else if (e.type === 'action') {
      if (index === 0) return;
      const evaluated = outcome.actions[k++];
      if (e.name === 'action_listen' && evaluated?.predicted === 'action_listen') return;
      const wrong =
        evaluated && evaluated.predicted !== evaluated.action
          ? `  # predicted: ${evaluated.predicted}`
          : '';
      lines.push(`  - action: ${e.name ?? e.actionText ?? ''}${wrong}`);
    } else if (e.type === 'active_loop') {
      lines.push(`  - active_loop: ${e.name ?? 'null'}`);
    } else if (e.type === 'slot') {
      lines.push(`  - slot_was_set:\n    - ${e.name}: ${JSON.stringify(e.value)}`);
    }
  });
  return `${lines.join('\n')}\n`;
}

/**
 * `parley shell`: chat with the model in the terminal (or through a pipe). Conversations live in
 * memory only; custom actions use `--endpoints`. Each bot message is printed on its own line
 * (buttons as `[title](payload)`, images as `Image: <url>`); ends at `/stop` or end of input.
 */
export async function shell(
  opts: ShellOptions,
  input: Readable = process.stdin,
  output: Writable = process.stdout,
  log: (line: string) => void = (line) => process.stderr.write(`${line}\n`),
): Promise<void> {
  const { path, assistant } = await loadCliAssistant(opts.model);
  let endpoint: ActionEndpoint | null = null;
  let nlg: NlgServer | null = null;
  if (opts.endpoints) {
    const endpoints = await readDialogueEndpoints(opts.endpoints, PARLEY_VERSION, 300_000);
    endpoint = endpoints.action;
    nlg = endpoints.nlg;
  }
  const sender = opts.sender ?? 'shell';
  const tracker = new DialogueStateTracker(sender, assistant.domain.slots);
  tracker.modelId = assistant.modelId;
  tracker.assistantId = assistant.assistantId;
  let last = 0;
  const now = (): number => (last = Math.max(Date.now() / 1000, last + 0.000001));
  const processor = new DialogueProcessor(assistant.domain, assistant.policies ?? null, {
    endpoint,
    nlg,
    now,
    calm: assistant.calm ?? null,
    warn: (m) => log(`warning: ${m}`),
  });
  log(`Model loaded from ${path}. Type a message and press enter (end with /stop or Ctrl-D).`);
  for (const notice of assistant.nlu?.notices ?? []) log(`warning: ${notice}`);
  if (!assistant.policies) {
    log('warning: the model has no dialogue policies; messages are only parsed.');
  }
  const lines = createInterface({ input, terminal: false, crlfDelay: Infinity });
  for await (const line of lines) {
    const text = line.trim();
    if (text === '') continue;
    // Rasa's shell ends at `/stop`.
    if (text === '/stop') break;
    const start = tracker.events.length;
    if (tracker.appliedEvents().length === 0) {
      for (const e of startSession(tracker, assistant.domain, now())) tracker.update(e);
    }
    await processor.handleUserMessage(
      tracker,
      {
        text,
        parseData: (await parseTextAwaitable(assistant.nlu, text, {
          onWarning: (m) => log(`warning: ${m}`),
        })) as unknown as JsonObject,
        inputChannel: 'cmdline',
        messageId: null,
      },
      'cmdline',
    );
    // Each bot message goes through Rasa's `send_response` (empty buttons, custom payloads and
    // elements of a rasa-sdk message are absent), as `rasa shell` gets them from the REST channel.
    const collector = new CollectingOutputChannel('cmdline');
    for (const e of tracker.events.slice(start)) {
      if (e.type === 'bot') await collector.sendResponse(sender, botMessageOf(e));
    }
    for (const m of collector.messages) {
      if (typeof m.text === 'string') output.write(`${m.text}\n`);
      if (Array.isArray(m.buttons)) {
        for (const b of m.buttons as JsonObject[]) {
          output.write(`  [${String(b.title)}](${String(b.payload)})\n`);
        }
      }
      if (typeof m.image === 'string') output.write(`Image: ${m.image}\n`);
      if (m.attachment !== undefined) output.write(`Attachment: ${JSON.stringify(m.attachment)}\n`);
      if (m.custom !== undefined) output.write(`${JSON.stringify(m.custom)}\n`);
    }
  }
}
