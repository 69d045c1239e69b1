import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cli, startCliServer } from 'test/utils/cli';
import { FIXTURES } from 'test/utils/create-test-app';

const MOODBOT = join(FIXTURES, 'moodbot');

function train(dir: string, config: string, extra: string[] = []) {
  return cli([
    'train',
    '--data',
    join(MOODBOT, 'data'),
    '--domain',
    join(MOODBOT, 'domain.yml'),
    '--config',
    config,
    '--out',
    join(dir, 'models'),
    ...extra,
  ]);
}

describe('parley train', () => {
  let dir: string;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'parley-train-'));
  });

  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('trains the mood bot (SpacyNLP swapped for the default pipeline), then skips by fingerprint', () => {
    const first = train(dir, join(MOODBOT, 'config.spacy.yml'));
    expect(first.stderr).toContain("'SpacyNLP' is not supported");
    expect(first.stderr).toMatch(/DIETClassifier#\d+ 100%/);
    expect(first.status).toBe(0);
    const path = first.stdout.trim();
    expect(path).toMatch(/models[/\\]\d{8}-\d{6}-[a-z]+-[a-z]+\.tar\.gz$/);

    const second = train(dir, join(MOODBOT, 'config.spacy.yml'));
    expect(second.status).toBe(0);
    expect(second.stdout.trim()).toBe(path);
    expect(second.stderr).toContain('Nothing changed');
    expect(readdirSync(join(dir, 'models'))).toHaveLength(1);

    const forced = train(dir, join(MOODBOT, 'config.spacy.yml'), [
      '--force',
      '--fixed-model-name',
      'f',
    ]);
    expect(forced.status).toBe(0);
    expect(forced.stdout.trim()).toBe(join(dir, 'models', 'f.tar.gz'));
    expect(readdirSync(join(dir, 'models'))).toHaveLength(2);

    // The story augmentation factor is part of what the dialogue model is trained from.
    const noAugmentation = train(dir, join(MOODBOT, 'config.spacy.yml'), ['--augmentation', '0']);
    expect(noAugmentation.status).toBe(0);
    expect(noAugmentation.stderr).not.toContain('Nothing changed');
    expect(readdirSync(join(dir, 'models'))).toHaveLength(3);
    const again = train(dir, join(MOODBOT, 'config.spacy.yml'), ['--augmentation', '0']);
    expect(again.stderr).toContain('Nothing changed');

    const bad = train(dir, join(MOODBOT, 'config.spacy.yml'), ['--augmentation', 'many']);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain("option '--augmentation <factor>' argument 'many' is invalid");
  }, 120_000);

  it('stops with exit 1 and file:line on bad NLU data', () => {
    const data = join(dir, 'bad-data');
    mkdirSync(data);
    const bad = join(data, 'nlu.yml');
    writeFileSync(
      bad,
      'version: "3.1"\nnlu:\n- intent: greet\n  examples: |\n    - hi\n- intnt: bye\n  examples: |\n    - bye\n',
    );
    const r = cli([
      'train',
      '--data',
      data,
      '--domain',
      join(MOODBOT, 'domain.yml'),
      '--config',
      join(MOODBOT, 'config.spacy.yml'),
      '--out',
      join(dir, 'bad-models'),
    ]);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(`${bad}:6`);
    expect(r.stdout).toBe('');
  });

  it('serves the trained model with `run --model <dir>`: /model/parse "hello" is greet', async () => {
    // The moodbot's config trains DIET for 1 epoch (Rasa's CI setting); give it enough epochs.
    const config = join(dir, 'config.yml');
    writeFileSync(
      config,
      readFileSync(join(MOODBOT, 'config.spacy.yml'), 'utf8').replace(/epochs: 1\b/g, 'epochs: 60'),
    );
    const trained = cli([
      'train',
      '--data',
      join(MOODBOT, 'data'),
      '--domain',
      join(MOODBOT, 'domain.yml'),
      '--config',
      config,
      '--out',
      join(dir, 'served'),
    ]);
    expect(trained.status).toBe(0);

    const server = await startCliServer(['--enable-api', '--model', join(dir, 'served')], {
      ...process.env,
      LOG_LEVEL: 'info',
    });
    try {
      const res = await fetch(`${server.base}/model/parse`, {
        method: 'POST',
        body: JSON.stringify({ text: 'hello' }),
      });
      expect(res.status).toBe(200);
      const body = (await res.json()) as { text: string; intent: { name: string } };
      expect(body.text).toBe('hello');
      expect(body.intent.name).toBe('greet');
      const status = (await (await fetch(`${server.base}/status`)).json()) as {
        model_file: string;
      };
      expect(trained.stdout.trim().endsWith(status.model_file)).toBe(true);
      expect(server.output()).toContain('model loaded');
    } finally {
      expect(await server.stop()).toBe(0);
    }
  }, 120_000);
});
