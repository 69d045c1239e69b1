import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import request from 'supertest';
import { Header } from 'tar';
import { startTestApp, type TestApp } from 'test/utils/create-test-app';

/** A `.tar.gz` whose one member `big.bin` holds `size` zero bytes (compresses ~1000:1). */
function zeroBomb(size: number): Buffer {
  const header = new Header({
    path: 'big.bin',
    size,
    type: 'File',
    mode: 0o644,
    mtime: new Date(0),
  });
  const block = Buffer.alloc(512);
  header.encode(block, 0);
  const padding = (512 - (size % 512)) % 512;
  return gzipSync(Buffer.concat([block, Buffer.alloc(size + padding), Buffer.alloc(1024)]), {
    level: 1,
  });
}

/**
 * `PUT /model` refuses hostile local paths and archives with a 400 naming the problem — a
 * member over the configured size, FIFOs, devices, `/proc` entries — and keeps serving.
 */
describe('PUT /model: archive limits and local path checks', () => {
  let t: TestApp;
  let dir: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'parley-put-model-'));
    t = await startTestApp({
      env: { PARLEY_MODEL_MAX_FILE_BYTES: String(4 * 1024 * 1024) },
      withDomain: true,
    });
  });

  afterAll(async () => {
    await t?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const put = (modelFile: string) => request(t.url).put('/model').send({ model_file: modelFile });
  const stillServes = async () => {
    const res = await request(t.url).get('/domain').set('accept', 'application/json');
    expect(res.status).toBe(200);
  };

  it('refuses an archive whose member is larger than PARLEY_MODEL_MAX_FILE_BYTES', async () => {
    const path = join(dir, 'bomb.tar.gz');
    writeFileSync(path, zeroBomb(64 * 1024 * 1024));
    const res = await put(path);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ status: 'failure', reason: 'LoadingError', code: 400 });
    expect(res.body.message).toContain('PARLEY_MODEL_MAX_FILE_BYTES');
    expect(res.body.details).toMatchObject({ reason: 'file_too_large', limit: 4 * 1024 * 1024 });
    await stillServes();
  });

  it('refuses a FIFO without opening it for good', async () => {
    const fifo = join(dir, 'model.fifo');
    execFileSync('mkfifo', [fifo]);
    const answers = await Promise.all([put(fifo), put(fifo), put(fifo), put(fifo), put(fifo)]);
    for (const res of answers) {
      expect(res.status).toBe(400);
      expect(res.body.details).toMatchObject({ reason: 'special_file' });
    }
    await stillServes();
  });

  it.each(['/dev/zero', '/proc/self/status'])('refuses %s', async (path) => {
    const res = await put(path);
    expect(res.status).toBe(400);
    expect(res.body.details).toMatchObject({ reason: 'special_file' });
    await stillServes();
  });

  it('follows a symbolic link and checks its target', async () => {
    const link = join(dir, 'zero-link.tar.gz');
    symlinkSync('/dev/zero', link);
    const res = await put(link);
    expect(res.status).toBe(400);
    expect(res.body.details).toMatchObject({ reason: 'special_file' });
    await stillServes();
  });
});
