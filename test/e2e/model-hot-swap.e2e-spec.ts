import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { type LoadedAssistant } from 'src/core';
import {
  craftArchive,
  manifestFor as manifestForAny,
} from 'src/core/model-archive/testing/raw-tar';
import { MINIMUM_COMPATIBLE_VERSION, PARLEY_VERSION } from 'src/platform/config/version';
import request from 'supertest';
import { startTestApp, uniqueId, type TestApp } from 'test/utils/create-test-app';
import { startModelServer, trainMoodbot } from 'test/utils/model-fixtures';

const CONVERSATIONS = 20;

/** A manifest this server would accept, so each attack is refused for its own sake. */
function manifestFor(
  files: Record<string, string>,
  overrides: Record<string, unknown> = {},
): Record<string, unknown> {
  return manifestForAny(files, {
    parley_version: PARLEY_VERSION,
    minimum_compatible_version: MINIMUM_COMPATIBLE_VERSION,
    ...overrides,
  });
}
const SWAPS = 10;

/** V8's collector, to show that replaced models are garbage (no timing involved). */
function collector(): () => void {
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}

/** Remembers the served model weakly (in its own frame, so no local keeps it alive). */
function track(refs: Array<WeakRef<LoadedAssistant>>, registry: TestApp['registry']): void {
  const current = registry.current();
  if (current !== null) refs.push(new WeakRef(current));
}

describe('hot swap: 20 conversations talk while the model is replaced 10 times', () => {
  let dir: string;
  let models: [string, string];
  let t: TestApp;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'parley-hot-swap-'));
    models = (await trainMoodbot(['swap-a', 'swap-b'], dir)) as [string, string];
    t = await startTestApp({ withDomain: false });
    await request(t.url).put('/model').send({ model_file: models[0] }).expect(204);
  }, 120_000);

  afterAll(async () => {
    await t?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers every request 2xx, stores every event and keeps no replaced model', async () => {
    const failures: Array<{ route: string; status: number }> = [];
    const sent = new Map<string, string[]>();
    const replaced: Array<WeakRef<LoadedAssistant>> = [];
    let swapping = true;

    const talk = async (id: string): Promise<void> => {
      const texts: string[] = [];
      sent.set(id, texts);
      // Keep talking until the swaps are over, and a few turns after.
      let after = 0;
      while (swapping || after++ < 3) {
        const text = `I am ${texts.length % 2 === 0 ? 'happy' : 'sad'} ${texts.length}`;
        const msg = await request(t.url)
          .post(`/conversations/${id}/messages`)
          .send({ text, sender: 'user' });
        if (msg.status !== 200) failures.push({ route: 'messages', status: msg.status });
        else texts.push(text);
        const parse = await request(t.url).post('/model/parse').send({ text });
        if (parse.status !== 200) failures.push({ route: 'parse', status: parse.status });
        else if (typeof parse.body.intent?.name !== 'string') {
          failures.push({ route: 'parse (no intent)', status: parse.status });
        }
      }
    };

    const ids = Array.from({ length: CONVERSATIONS }, () => uniqueId('swap'));
    const conversations = Promise.all(ids.map(talk));
    const served: string[] = [];
    for (let i = 1; i <= SWAPS; i++) {
      track(replaced, t.registry);
      const put = await request(t.url)
        .put('/model')
        .send({ model_file: models[i % 2] as string });
      if (put.status !== 204) failures.push({ route: 'PUT /model', status: put.status });
      served.push((await request(t.url).get('/status')).body.model_file as string);
    }
    swapping = false;
    await conversations;

    expect(failures).toEqual([]);
    expect(served).toEqual(
      Array.from({ length: SWAPS }, (_v, i) => basename(models[(i + 1) % 2] as string)),
    );
    for (const id of ids) {
      const tracker = await request(t.url).get(`/conversations/${id}/tracker`);
      const users = (tracker.body.events as Array<{ event: string; text?: string }>)
        .filter((e) => e.event === 'user')
        .map((e) => e.text);
      expect(users).toEqual(sent.get(id));
      expect(users.length).toBeGreaterThan(3);
    }

    // The registry holds exactly the model loaded last; every replaced one is unreachable.
    const last = t.registry.current();
    expect(last?.modelFile).toBe(basename(models[SWAPS % 2] as string));
    expect(replaced).toHaveLength(SWAPS);
    const gc = collector();
    for (let i = 0; i < 3; i++) {
      gc();
      await new Promise((r) => setImmediate(r));
    }
    const alive = replaced.flatMap((ref, i) => (ref.deref() === undefined ? [] : [i]));
    expect(alive).toEqual([]);
  }, 180_000);

  describe('malicious archives are rejected and the old model keeps serving', () => {
    const DOMAIN = 'version: "3.1"\nintents:\n  - greet\n';
    const MiB = 1024 * 1024;
    const attacks: Array<[string, () => Buffer, RegExp]> = [
      [
        'path traversal',
        () => craftArchive(manifestFor({}), [{ path: '../../outside.txt', data: 'pwned' }]),
        /escapes|\.\./,
      ],
      [
        'absolute path',
        () => craftArchive(manifestFor({}), [{ path: '/etc/cron.d/evil', data: 'pwned' }]),
        /absolute/,
      ],
      [
        'symlink',
        () =>
          craftArchive(manifestFor({ 'domain.yml': DOMAIN }), [
            { path: 'domain.yml', type: '2', linkpath: '/etc/passwd' },
          ]),
        /symbolic link/,
      ],
      [
        'hard link',
        () => craftArchive(manifestFor({}), [{ path: 'x', type: '1', linkpath: 'manifest.json' }]),
        /link/,
      ],
      ['device', () => craftArchive(manifestFor({}), [{ path: 'dev', type: '3' }]), /device/],
      [
        'oversized member',
        () =>
          craftArchive(manifestFor({}), [{ path: 'huge.bin', size: 4 * 1024 * MiB }], {
            end: false,
          }),
        /4294967296 bytes/,
      ],
      ['truncated', () => readFileSync(models[0]).subarray(0, 600), /truncated|unexpected end/i],
      [
        'wrong manifest',
        () => craftArchive(manifestFor({ 'domain.yml': DOMAIN }, { format_version: 99 }), []),
        /format_version|version/,
      ],
      [
        'checksum mismatch',
        () =>
          craftArchive(manifestFor({ 'domain.yml': DOMAIN }), [
            { path: 'domain.yml', data: `${DOMAIN}  - evil\n` },
          ]),
        /checksum|sha256|does not match/i,
      ],
      ['not an archive', () => Buffer.from('hello'), /gzip|archive/i],
    ];

    it.each(attacks)('%s: PUT /model model_file → 400', async (name, build, message) => {
      await request(t.url).put('/model').send({ model_file: models[0] }).expect(204);
      const before = (await request(t.url).get('/status')).body.model_id as string;
      const path = join(dir, `${name.replace(/\W+/g, '-')}.tar.gz`);
      writeFileSync(path, build());
      const res = await request(t.url).put('/model').send({ model_file: path });
      expect(res.status).toBe(400);
      expect(res.body.status).toBe('failure');
      expect(res.body.message).toMatch(message);
      expect((await request(t.url).get('/status')).body.model_id).toBe(before);
      const parse = await request(t.url).post('/model/parse').send({ text: 'I am sad' });
      expect(parse.status).toBe(200);
    });

    it.each(attacks)('%s: from a model server → 400', async (name, build) => {
      await request(t.url).put('/model').send({ model_file: models[0] }).expect(204);
      const before = (await request(t.url).get('/status')).body.model_id as string;
      const path = join(dir, `served-${name.replace(/\W+/g, '-')}.tar.gz`);
      writeFileSync(path, build());
      const server = await startModelServer();
      try {
        server.publish({ path, etag: '"evil"' });
        const res = await request(t.url)
          .put('/model')
          .send({ model_server: { url: server.url } });
        expect(res.status).toBe(400);
        expect((await request(t.url).get('/status')).body.model_id).toBe(before);
      } finally {
        await server.close();
      }
    });
  });
});
