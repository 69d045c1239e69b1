import { Client } from 'minio';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { craftArchive, manifestFor } from 'src/core/model-archive/testing/raw-tar';
import request from 'supertest';
import { cli, cliAsync, startCliServer } from 'test/utils/cli';
import { FIXTURES, startTestApp, type TestApp } from 'test/utils/create-test-app';
import { startTestS3, type TestS3 } from 'test/utils/s3-server';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';

const MOODBOT = join(FIXTURES, 'moodbot');
const PROJECT = join(FIXTURES, 'persistor-project');
const TRAIN_ARGS = [
  'train',
  '--data',
  join(MOODBOT, 'data'),
  '--domain',
  join(MOODBOT, 'domain.yml'),
  '--config',
  join(MOODBOT, 'config.yml'),
];

function s3Client(s3: TestS3): Client {
  const url = new URL(s3.endpoint);
  return new Client({
    endPoint: url.hostname,
    port: Number(url.port),
    useSSL: false,
    pathStyle: true,
    region: 'us-east-1',
    accessKey: s3.env.AWS_ACCESS_KEY_ID,
    secretKey: s3.env.AWS_SECRET_ACCESS_KEY,
  });
}

async function keys(client: Client, bucket: string): Promise<string[]> {
  const out: string[] = [];
  for await (const item of client.listObjectsV2(bucket, '', true)) {
    out.push((item as { name: string }).name);
  }
  return out.sort();
}

/** `parley train` in its own working directory (it keeps a copy in models/ there). */
async function train(cwd: string, extra: string[], env: Record<string, string>) {
  const result = await cliAsync([...TRAIN_ARGS, ...extra], env, cwd);
  if (result.status !== 0) throw new Error(`parley train failed:\n${result.stderr}`);
  return result;
}

describe('remote storage: aws (a real S3 API server on loopback)', () => {
  let s3: TestS3;
  let client: Client;
  let work: string;
  let modelName: string;
  let t: TestApp;

  beforeAll(async () => {
    s3 = await startTestS3();
    client = s3Client(s3);
    work = mkdtempSync(join(tmpdir(), 'parley-remote-'));
    const trained = await train(
      work,
      ['--remote-storage', 'aws', '--fixed-model-name', 'mood'],
      s3.env,
    );
    modelName = 'mood.tar.gz';
    expect(trained.stdout.trim()).toBe(join('models', modelName));
    expect(trained.stderr).toContain(
      `Model uploaded to remote storage 'aws' as models/${modelName}`,
    );
    t = await startTestApp({ env: s3.env });
  }, 180_000);

  afterAll(async () => {
    await t?.close();
    await s3?.close();
    rmSync(work, { recursive: true, force: true });
  });

  it('parley train --remote-storage aws uploads to models/ in the bucket, byte for byte', async () => {
    expect(await keys(client, s3.bucket)).toContain(`models/${modelName}`);
    const stream = await client.getObject(s3.bucket, `models/${modelName}`);
    const chunks: Buffer[] = [];
    for await (const chunk of stream) chunks.push(chunk as Buffer);
    expect(Buffer.concat(chunks).equals(readFileSync(join(work, 'models', modelName)))).toBe(true);
  });

  it('--out is the path in the bucket; REMOTE_STORAGE_PATH is honoured with a warning', async () => {
    const outDir = mkdtempSync(join(tmpdir(), 'parley-remote-out-'));
    const legacyDir = mkdtempSync(join(tmpdir(), 'parley-remote-legacy-'));
    try {
      const out = await train(
        outDir,
        ['--remote-storage', 'aws', '--fixed-model-name', 'out', '--out', 'team/a'],
        s3.env,
      );
      expect(out.stderr).not.toMatch(/deprecated/);
      const deprecated = await train(
        legacyDir,
        ['--remote-storage', 'aws', '--fixed-model-name', 'legacy'],
        { ...s3.env, REMOTE_STORAGE_PATH: 'legacy-folder' },
      );
      expect(deprecated.stderr).toMatch(/REMOTE_STORAGE_PATH is deprecated.*4\.0/);
      const all = await keys(client, s3.bucket);
      expect(all).toEqual(
        expect.arrayContaining(['team/a/out.tar.gz', 'legacy-folder/legacy.tar.gz']),
      );
    } finally {
      rmSync(outDir, { recursive: true, force: true });
      rmSync(legacyDir, { recursive: true, force: true });
    }
  }, 240_000);

  it('PUT /model with remote_storage aws loads the named model (full key or bare name)', async () => {
    for (const name of [`models/${modelName}`, 'mood']) {
      t.registry.unload();
      const res = await request(t.url)
        .put('/model')
        .send({ model_file: name, remote_storage: 'aws' });
      expect(res.status).toBe(204);
      const status = await request(t.url).get('/status');
      expect(status.body.model_file).toBe(modelName);
      const parse = await request(t.url).post('/model/parse').send({ text: 'I am very sad' });
      expect(parse.status).toBe(200);
      expect(parse.body.intent.name).toBe('mood_unhappy');
    }
  });

  it('REMOTE_STORAGE_PATH selects the folder when loading', async () => {
    const legacy = await startTestApp({
      env: { ...s3.env, REMOTE_STORAGE_PATH: 'legacy-folder' },
      withDomain: false,
    });
    try {
      const res = await request(legacy.url)
        .put('/model')
        .send({ model_file: 'some/where/legacy', remote_storage: 'aws' });
      expect(res.status).toBe(204);
      expect((await request(legacy.url).get('/status')).body.model_file).toBe('legacy.tar.gz');
    } finally {
      await legacy.close();
    }
  });

  it('answers 400 for a model that is not in the bucket, keeping the served model', async () => {
    await request(t.url).put('/model').send({ model_file: 'mood', remote_storage: 'aws' });
    const before = (await request(t.url).get('/status')).body.model_id as string;
    const res = await request(t.url)
      .put('/model')
      .send({ model_file: 'models/missing.tar.gz', remote_storage: 'aws' });
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(
      new RegExp(`Model 'models/missing.tar.gz' was not found in bucket '${s3.bucket}'`),
    );
    expect(res.body.reason).toBe('BadRequest');
    expect((await request(t.url).get('/status')).body.model_id).toBe(before);
  });

  it('answers 400 for a wrong bucket and for an unreachable S3 endpoint', async () => {
    for (const env of [
      { ...s3.env, BUCKET_NAME: 'no-such-bucket' },
      { ...s3.env, AWS_ENDPOINT_URL: 'http://127.0.0.1:9' },
    ]) {
      const other = await startTestApp({ env });
      try {
        const res = await request(other.url)
          .put('/model')
          .send({ model_file: 'mood', remote_storage: 'aws' });
        expect(res.status).toBe(400);
        expect(res.body.status).toBe('failure');
        expect((await request(other.url).get('/status')).body.model_id).toBe(
          'a1b2c3d4e5f60718293a4b5c6d7e8f90',
        );
      } finally {
        await other.close();
      }
    }
  });

  it('rejects malicious archives from the bucket and keeps serving the old model', async () => {
    await request(t.url).put('/model').send({ model_file: 'mood', remote_storage: 'aws' });
    const before = (await request(t.url).get('/status')).body.model_id as string;
    const evil = craftArchive(manifestFor({}), [{ path: '../../evil.txt', data: 'pwned' }]);
    const link = craftArchive(manifestFor({}), [
      { path: 'domain.yml', type: '2', linkpath: '/etc/passwd' },
    ]);
    await client.putObject(s3.bucket, 'models/evil.tar.gz', evil);
    await client.putObject(s3.bucket, 'models/link.tar.gz', link);
    for (const name of ['evil', 'link']) {
      const res = await request(t.url)
        .put('/model')
        .send({ model_file: name, remote_storage: 'aws' });
      expect(res.status).toBe(400);
      expect(res.body.reason).toBe('LoadingError');
      expect((await request(t.url).get('/status')).body.model_id).toBe(before);
    }
  });

  it('POST /model/train uploads to the bucket when the server runs with remote storage', async () => {
    const server = await startTestApp({
      env: { ...s3.env, PARLEY_REMOTE_STORAGE: 'aws', PARLEY_MODEL: `models/${modelName}` },
      withDomain: false,
    });
    try {
      // Loaded from the bucket at start.
      expect((await request(server.url).get('/status')).body.model_file).toBe(modelName);
      const merged: Record<string, unknown> = {};
      for (const file of ['config.yml', 'domain.yml', join('data', 'nlu.yml')]) {
        const doc = parseYaml(readFileSync(join(MOODBOT, file), 'utf8')) as Record<string, unknown>;
        delete doc.version;
        Object.assign(merged, doc);
      }
      const yaml = stringifyYaml({ version: '3.1', ...merged });
      const res = await request(server.url)
        .post('/model/train?save_to_default_model_directory=false')
        .set('Content-Type', 'application/x-yaml')
        .send(yaml);
      expect(res.body).toEqual(expect.any(Buffer));
      expect(res.status).toBe(200);
      const filename = res.headers.filename as string;
      expect(await keys(client, s3.bucket)).toContain(`models/${filename}`);
    } finally {
      await server.close();
    }
  }, 120_000);

  it('parley run --remote-storage aws --model <name> serves the model from the bucket', async () => {
    const server = await startCliServer(
      ['--enable-api', '--remote-storage', 'aws', '--model', 'mood'],
      { ...process.env, ...s3.env, LOG_LEVEL: 'silent' },
    );
    try {
      const status = await fetch(`${server.base}/status`);
      expect(((await status.json()) as { model_file: string }).model_file).toBe(modelName);
    } finally {
      await server.stop();
    }
  }, 60_000);

  it('parley run --remote-storage without --model exits 2 naming the missing model name', () => {
    const result = cli(['run', '--remote-storage', 'aws'], { ...s3.env, PARLEY_MODEL: '' });
    expect(result.status).toBe(2);
    expect(result.stderr).toMatch(/model name is required \(--model\)/);
  });
});

describe('remote storage: a custom persistor module at the project root', () => {
  let bucket: string;
  let work: string;
  let t: TestApp;
  const env = (): Record<string, string> => ({ BUCKET_NAME: bucket, PARLEY_PROJECT_DIR: PROJECT });

  beforeAll(async () => {
    bucket = mkdtempSync(join(tmpdir(), 'parley-dir-bucket-'));
    work = mkdtempSync(join(tmpdir(), 'parley-custom-'));
    const trained = await train(
      work,
      ['--remote-storage', 'persistor.DirPersistor', '--fixed-model-name', 'custom'],
      env(),
    );
    expect(trained.stderr).toContain(
      "Model uploaded to remote storage 'persistor.DirPersistor' as models/custom.tar.gz",
    );
    t = await startTestApp({ env: env() });
  }, 180_000);

  afterAll(async () => {
    await t?.close();
    rmSync(bucket, { recursive: true, force: true });
    rmSync(work, { recursive: true, force: true });
  });

  it('persistTar stored the archive under models/ of its bucket', () => {
    expect(readdirSync(join(bucket, 'models'))).toEqual(['custom.tar.gz']);
  });

  it('PUT /model with remote_storage <module>.<class> loads through retrieveTar', async () => {
    const res = await request(t.url)
      .put('/model')
      .send({ model_file: 'custom', remote_storage: 'persistor.DirPersistor' });
    expect(res.status).toBe(204);
    expect((await request(t.url).get('/status')).body.model_file).toBe('custom.tar.gz');
  });

  it('a persistor written in TypeScript (ts_persistor.ts) loads the same model', async () => {
    await request(t.url).delete('/model').expect(204);
    const res = await request(t.url)
      .put('/model')
      .send({ model_file: 'custom', remote_storage: 'ts_persistor.TsDirPersistor' });
    expect(res.status).toBe(204);
    expect((await request(t.url).get('/status')).body.model_file).toBe('custom.tar.gz');
  });

  it('a missing model (ENOENT from the persistor) is a 400 naming it', async () => {
    const res = await request(t.url)
      .put('/model')
      .send({ model_file: 'nothing', remote_storage: 'persistor.DirPersistor' });
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(
      /No model 'nothing' in remote storage \(tried nothing.tar.gz, models\/nothing.tar.gz\)/,
    );
  });

  it.each([
    ['persistor.Incomplete', /Incomplete does not implement persistTar, retrieveTarSize/],
    ['persistor.Missing', /persistor exports no class named Missing/],
    ['persistor.Broken', /failed in retrieveTarSize: storage is down/],
  ])('%s → 400 with a clear message, old model kept', async (kind, message) => {
    await request(t.url)
      .put('/model')
      .send({ model_file: 'custom', remote_storage: 'persistor.DirPersistor' });
    const before = (await request(t.url).get('/status')).body.model_id as string;
    const res = await request(t.url)
      .put('/model')
      .send({ model_file: 'custom', remote_storage: kind });
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(message);
    expect((await request(t.url).get('/status')).body.model_id).toBe(before);
  });

  it('a bad upload target fails parley train with exit 1 and the persistor message', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'parley-custom-fail-'));
    try {
      mkdirSync(join(dir, 'models'));
      copyFileSync(join(PROJECT, 'persistor.js'), join(dir, 'persistor.js'));
      const result = await cliAsync(
        [...TRAIN_ARGS, '--remote-storage', 'persistor.Broken'],
        { BUCKET_NAME: bucket },
        dir,
      );
      expect(result.status).toBe(1);
      expect(result.stderr).toMatch(/Custom persistor 'persistor.Broken' failed in persistTar/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
