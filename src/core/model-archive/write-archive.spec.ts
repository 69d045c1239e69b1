import { mkdir, mkdtemp, readFile, readdir, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { DialogueError } from 'src/core/errors/dialogue-error';
import {
  MANIFEST_PATH,
  findLatestModel,
  fingerprint,
  fixedModelFileName,
  generateModelName,
  readModelArchive,
  readModelManifest,
  scanModelDirectory,
  writeModelArchive,
  type WriteModelArchiveOptions,
} from 'src/core/model-archive';
import { SERVER, craftArchive, manifestFor, sha256 } from 'src/core/model-archive/testing/raw-tar';

const FILES = {
  'domain.yml': 'version: "3.1"\nintents:\n  - greet\n',
  'nlu/model.json': JSON.stringify({ format: 'parley-nlu/1', pipeline: [] }),
  'core/policy.bin': Buffer.from([0, 1, 2, 3, 255, 254]),
};

function options(
  outDir: string,
  extra: Partial<WriteModelArchiveOptions> = {},
): WriteModelArchiveOptions {
  return {
    outDir,
    files: FILES,
    fingerprint: fingerprint({ domain: FILES['domain.yml'] }, SERVER.parleyVersion),
    parleyVersion: SERVER.parleyVersion,
    minimumCompatibleVersion: SERVER.minimumCompatibleVersion,
    assistantId: 'moodbot',
    components: ['WhitespaceTokenizer', 'DIETClassifier'],
    ...extra,
  };
}

async function rejection(promise: Promise<unknown>): Promise<DialogueError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof DialogueError) return error;
    throw error;
  }
  throw new Error('expected a DialogueError');
}

describe('model archive: write and read', () => {
  let dir: string;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'parley-archive-spec-'));
  });

  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('round-trips files and manifest', async () => {
    const trainedAt = new Date(Date.UTC(2024, 4, 1, 13, 14, 15, 678));
    const written = await writeModelArchive(options(dir, { trainedAt }));

    expect(written.path.startsWith(dir)).toBe(true);
    expect(written.path.slice(dir.length + 1)).toMatch(/^20240501-131415-[a-z]+-[a-z]+\.tar\.gz$/);
    expect(written.manifest).toEqual({
      format: 'parley-model',
      format_version: 1,
      model_id: expect.stringMatching(/^[0-9a-f]{32}$/),
      fingerprint: expect.stringMatching(/^[0-9a-f]{64}$/),
      assistant_id: 'moodbot',
      parley_version: '1.4.2',
      minimum_compatible_version: '1.2.0',
      trained_at: '2024-05-01T13:14:15.678Z',
      components: ['WhitespaceTokenizer', 'DIETClassifier'],
      files: {
        'core/policy.bin': sha256(FILES['core/policy.bin']),
        'domain.yml': sha256(FILES['domain.yml']),
        'nlu/model.json': sha256(FILES['nlu/model.json']),
      },
    });

    const read = await readModelArchive(written.path, SERVER);
    expect(read.manifest).toEqual(written.manifest);
    expect([...read.files.keys()].sort()).toEqual(Object.keys(FILES).sort());
    expect(read.files.get('domain.yml')?.toString('utf8')).toBe(FILES['domain.yml']);
    expect(read.files.get('nlu/model.json')?.toString('utf8')).toBe(FILES['nlu/model.json']);
    expect(read.files.get('core/policy.bin')).toEqual(FILES['core/policy.bin']);
    expect(await readModelManifest(written.path)).toEqual(written.manifest);
    // Only the archive is left: no temporary file in outDir.
    expect(await readdir(dir)).toEqual([written.path.slice(dir.length + 1)]);
  });

  it('writes manifest.json as the first member of a gzip tar', async () => {
    const { path } = await writeModelArchive(options(dir));
    const tar = gunzipSync(await readFile(path));
    expect(tar.subarray(0, MANIFEST_PATH.length).toString('utf8')).toBe(MANIFEST_PATH);
  });

  it('uses a fixed model name, appending .tar.gz, and replaces an existing archive', async () => {
    const first = await writeModelArchive(options(dir, { fixedModelName: 'my-model' }));
    expect(first.path).toBe(join(dir, 'my-model.tar.gz'));
    const second = await writeModelArchive(options(dir, { fixedModelName: 'my-model.tar.gz' }));
    expect(second.path).toBe(join(dir, 'my-model.tar.gz'));
    expect(second.manifest.model_id).not.toBe(first.manifest.model_id);
    expect((await readModelArchive(second.path, SERVER)).manifest.model_id).toBe(
      second.manifest.model_id,
    );
    expect(await readdir(dir)).toEqual(['my-model.tar.gz']);
  });

  it('creates the output directory', async () => {
    const outDir = join(dir, 'a', 'b');
    const { path } = await writeModelArchive(options(outDir, { fixedModelName: 'x' }));
    expect(path).toBe(join(outDir, 'x.tar.gz'));
    expect((await stat(path)).isFile()).toBe(true);
  });

  it.each(['../evil', 'a/b', 'a\\b', '', '..', '.hidden', 'nul\0byte', 'C:evil'])(
    'refuses the fixed model name %j',
    async (name) => {
      const error = await rejection(writeModelArchive(options(dir, { fixedModelName: name })));
      expect(error.code).toBe('MODEL.INVALID_NAME');
      expect(await readdir(dir)).toEqual([]);
    },
  );

  it.each(['../x', '/abs', 'a/../b', './a', 'a//b', 'a\\b', MANIFEST_PATH])(
    'refuses the member path %j',
    async (member) => {
      const error = await rejection(writeModelArchive(options(dir, { files: { [member]: 'x' } })));
      expect(error.code).toBe('MODEL.INVALID_ARCHIVE');
      expect(await readdir(dir)).toEqual([]);
    },
  );

  it('refuses a member that is both a file and a directory', async () => {
    const error = await rejection(
      writeModelArchive(options(dir, { files: { nlu: 'x', 'nlu/model.json': '{}' } })),
    );
    expect(error.message).toContain('both a file and a directory');
  });

  it('refuses invalid versions and fingerprints', async () => {
    expect(
      (await rejection(writeModelArchive(options(dir, { parleyVersion: '1.4' })))).message,
    ).toContain('not a semantic version');
    expect(
      (await rejection(writeModelArchive(options(dir, { minimumCompatibleVersion: '2.0.0' }))))
        .message,
    ).toContain('newer than parleyVersion');
    expect(
      (await rejection(writeModelArchive(options(dir, { fingerprint: 'abc' })))).message,
    ).toContain('fingerprint');
    expect(await readdir(dir)).toEqual([]);
  });
});

describe('findLatestModel', () => {
  let dir: string;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'parley-latest-spec-'));
  });

  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('picks the newest manifest trained_at, not the newest file time or name', async () => {
    const at = (iso: string) => new Date(iso);
    const older = await writeModelArchive(
      options(dir, { fixedModelName: 'zzz-old', trainedAt: at('2024-01-01T00:00:00Z') }),
    );
    const newest = await writeModelArchive(
      options(dir, { fixedModelName: 'aaa-new', trainedAt: at('2024-03-01T00:00:00Z') }),
    );
    const middle = await writeModelArchive(
      options(dir, { fixedModelName: 'mmm-mid', trainedAt: at('2024-02-01T00:00:00Z') }),
    );
    // Misleading file times: the oldest model looks the most recent on disk.
    await utimes(older.path, at('2030-01-01T00:00:00Z'), at('2030-01-01T00:00:00Z'));
    await utimes(newest.path, at('2000-01-01T00:00:00Z'), at('2000-01-01T00:00:00Z'));
    await utimes(middle.path, at('2020-01-01T00:00:00Z'), at('2020-01-01T00:00:00Z'));
    // Unreadable archives are skipped and reported.
    await writeFile(join(dir, 'broken.tar.gz'), 'not a gzip');
    await writeFile(join(dir, 'foreign.tar.gz'), craftArchive(null, [{ path: 'x', data: 'y' }]));
    await writeFile(join(dir, 'ignored.txt'), 'not an archive');
    await mkdir(join(dir, 'dir.tar.gz'));

    expect(await findLatestModel(dir)).toBe(newest.path);
    const scan = await scanModelDirectory(dir);
    expect(scan.latest?.manifest.trained_at).toBe('2024-03-01T00:00:00.000Z');
    expect(scan.skipped).toEqual([
      expect.objectContaining({ path: join(dir, 'broken.tar.gz'), reason: 'not_gzip' }),
      expect.objectContaining({ path: join(dir, 'foreign.tar.gz'), reason: 'missing_manifest' }),
    ]);
  });

  it('skips models this server cannot load when given its versions', async () => {
    const newer = craftArchive(
      manifestFor({}, { parley_version: '0.9.0', trained_at: '2025-01-01T00:00:00.000Z' }),
      [],
    );
    await writeFile(join(dir, 'ancient.tar.gz'), newer);
    const ok = await writeModelArchive(
      options(dir, { trainedAt: new Date('2024-01-01T00:00:00Z') }),
    );
    expect(await findLatestModel(dir)).toBe(join(dir, 'ancient.tar.gz'));
    const scan = await scanModelDirectory(dir, { compatibility: SERVER });
    expect(scan.latest?.path).toBe(ok.path);
    expect(scan.skipped).toEqual([expect.objectContaining({ reason: 'incompatible' })]);
  });

  it('returns null for an empty or missing directory', async () => {
    expect(await findLatestModel(dir)).toBeNull();
    expect(await findLatestModel(join(dir, 'missing'))).toBeNull();
  });
});

describe('model names', () => {
  it('generates Rasa-style names from the UTC time', () => {
    const name = generateModelName(new Date(Date.UTC(2023, 11, 31, 23, 5, 9)));
    expect(name).toMatch(/^20231231-230509-[a-z]+-[a-z]+\.tar\.gz$/);
  });

  it('appends .tar.gz to fixed names once', () => {
    expect(fixedModelFileName('model')).toBe('model.tar.gz');
    expect(fixedModelFileName('model.tar.gz')).toBe('model.tar.gz');
    expect(fixedModelFileName('v1.2')).toBe('v1.2.tar.gz');
  });
});
