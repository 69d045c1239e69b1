import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { DialogueError } from 'src/core/errors/dialogue-error';
import {
  fingerprint,
  readModelArchive,
  readModelManifest,
  writeModelArchive,
  type ArchiveLimits,
} from 'src/core/model-archive';
import {
  craftArchive,
  manifestFor,
  paxRecords,
  rawTar,
  SERVER,
  sha256,
  type RawEntry,
} from 'src/core/model-archive/testing/raw-tar';

const DOMAIN = 'version: "3.1"\n';
const KiB = 1024;
const MiB = 1024 * KiB;

/** Every file and directory under `root`, recursively, as sorted relative paths. */
async function tree(root: string): Promise<string[]> {
  const entries = await readdir(root, { recursive: true });
  return entries.map(String).sort();
}

describe('readModelArchive: hostile archives', () => {
  let root: string;
  let models: string;

  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'parley-attack-spec-'));
    models = join(root, 'models');
    await mkdir(models);
  });

  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  /**
   * Writes the bytes as an archive, reads it and returns the DialogueError — after checking
   * that reading wrote nothing anywhere under the sandbox (no `../x`, no extracted members).
   */
  async function refused(
    bytes: Buffer,
    limits: ArchiveLimits = {},
    name = 'evil.tar.gz',
  ): Promise<DialogueError> {
    const path = join(models, name);
    await writeFile(path, bytes);
    const before = await tree(root);
    let caught: unknown;
    try {
      await readModelArchive(path, { ...SERVER, ...limits });
    } catch (error) {
      caught = error;
    }
    expect(await tree(root)).toEqual(before);
    expect(caught).toBeInstanceOf(DialogueError);
    return caught as DialogueError;
  }

  function expectProblem(error: DialogueError, reason: string, message: string | RegExp): void {
    expect(error.code).toBe('MODEL.INVALID_ARCHIVE');
    expect(error.details['reason']).toBe(reason);
    expect(error.message).toMatch(message);
  }

  /** A valid manifest for `files`, then the extra (hostile) entries. */
  function archive(files: Record<string, string>, extra: readonly RawEntry[]): Buffer {
    return craftArchive(manifestFor(files), [
      ...Object.entries(files).map(([path, data]) => ({ path, data })),
      ...extra,
    ]);
  }

  it('accepts a hand-crafted archive (the baseline the attacks start from)', async () => {
    const path = join(models, 'good.tar.gz');
    await writeFile(path, archive({ 'domain.yml': DOMAIN }, [{ path: 'nlu/', type: '5' }]));
    const read = await readModelArchive(path, SERVER);
    expect(read.files.get('domain.yml')?.toString()).toBe(DOMAIN);
  });

  describe('path attacks (zip-slip)', () => {
    it.each([
      ['../x', 'path_traversal'],
      ['nlu/../../x', 'path_traversal'],
      ['./../x', 'path_traversal'],
      ['/etc/x', 'absolute_path'],
      ['C:/windows/x', 'absolute_path'],
      ['a\\..\\..\\x', 'invalid_path'],
    ])('refuses a file member %j', async (member, reason) => {
      const error = await refused(
        archive({ 'domain.yml': DOMAIN }, [{ path: member, data: 'pwned' }]),
      );
      expectProblem(error, reason, JSON.stringify(member));
    });

    it('refuses a directory member ../escape', async () => {
      const error = await refused(archive({}, [{ path: '../escape/', type: '5' }]));
      expectProblem(error, 'path_traversal', /parent-directory/);
    });

    it('refuses ../ hidden in a pax extended header', async () => {
      const error = await refused(
        archive({ 'domain.yml': DOMAIN }, [
          { path: 'PaxHeader', type: 'x', data: paxRecords({ path: '../pax-escape' }) },
          { path: 'innocent.txt', data: 'pwned' },
        ]),
      );
      expectProblem(error, 'path_traversal', '"../pax-escape"');
    });

    it('refuses an absolute path hidden in a GNU long-name header', async () => {
      const error = await refused(
        archive({ 'domain.yml': DOMAIN }, [
          { path: '././@LongLink', type: 'L', data: '/tmp/gnu-escape\0' },
          { path: 'innocent.txt', data: 'pwned' },
        ]),
      );
      expectProblem(error, 'absolute_path', '"/tmp/gnu-escape"');
    });

    it('refuses a duplicate member that would shadow a verified one', async () => {
      const error = await refused(
        archive({ 'domain.yml': DOMAIN }, [{ path: 'domain.yml', data: 'evil: true\n' }]),
      );
      expectProblem(error, 'duplicate_path', 'more than once');
    });

    it.each([
      ['NFD spelling of a listed NFC name', 'caf\u00e9.yml', 'cafe\u0301.yml'],
      ['a case variant', 'domain.yml', 'Domain.yml'],
    ])('refuses Unicode-colliding names: %s', async (_, first, second) => {
      const error = await refused(
        craftArchive(manifestFor({ [first]: 'a: 1\n', [second]: 'a: 2\n' }), [
          { path: first, data: 'a: 1\n' },
          { path: second, data: 'a: 2\n' },
        ]),
      );
      expectProblem(error, 'duplicate_path', /collides with/);
    });

    it('refuses a member nested more than 1,024 directories deep (pax path)', async () => {
      const deep = `${'d/'.repeat(1025)}x.yml`;
      const error = await refused(
        craftArchive(manifestFor({ 'domain.yml': DOMAIN }), [
          { path: 'domain.yml', data: DOMAIN },
          { path: 'PaxHeader', type: 'x', data: paxRecords({ path: deep }) },
          { path: 'long', data: 'pwned' },
        ]),
      );
      expectProblem(error, 'invalid_path', /too long/);
    });
  });

  describe('entry types other than files and directories', () => {
    it('refuses a symbolic link', async () => {
      const error = await refused(
        archive({ 'domain.yml': DOMAIN }, [{ path: 'link', type: '2', linkpath: '/etc/passwd' }]),
      );
      expectProblem(error, 'symlink', /"link" is a symbolic link \(to "\/etc\/passwd"\)/);
    });

    it('refuses a hard link', async () => {
      const error = await refused(
        archive({ 'domain.yml': DOMAIN }, [{ path: 'hard', type: '1', linkpath: 'domain.yml' }]),
      );
      expectProblem(error, 'hardlink', /"hard" is a hard link/);
    });

    it('refuses a character device', async () => {
      const error = await refused(archive({ 'domain.yml': DOMAIN }, [{ path: 'tty', type: '3' }]));
      expectProblem(error, 'device', /"tty" is a character device/);
    });

    it('refuses a block device', async () => {
      const error = await refused(archive({ 'domain.yml': DOMAIN }, [{ path: 'sda', type: '4' }]));
      expectProblem(error, 'device', /"sda" is a block device/);
    });

    it('refuses a FIFO', async () => {
      const error = await refused(archive({ 'domain.yml': DOMAIN }, [{ path: 'pipe', type: '6' }]));
      expectProblem(error, 'fifo', /"pipe" is a FIFO/);
    });

    it('refuses other entry types (contiguous file, sparse file)', async () => {
      expectProblem(
        await refused(archive({}, [{ path: 'c', type: '7', data: 'x' }])),
        'unsupported_entry',
        /unsupported entry \(type ContiguousFile\)/,
      );
      expectProblem(
        await refused(archive({}, [{ path: 's', type: 'S', data: 'x' }]), {}, 'sparse.tar.gz'),
        'unsupported_entry',
        /unsupported entry/,
      );
    });
  });

  describe('size caps', () => {
    it('refuses a compressed file larger than maxBytes', async () => {
      const bytes = archive({ 'domain.yml': DOMAIN }, []);
      const error = await refused(bytes, { maxBytes: bytes.length - 1 });
      expectProblem(error, 'too_large', `more than the limit of ${bytes.length - 1} bytes`);
    });

    it('refuses a member larger than maxFileBytes before reading it', async () => {
      const big = 'x'.repeat(2000);
      const error = await refused(archive({ 'big.bin': big }, []), { maxFileBytes: 1000 });
      expectProblem(
        error,
        'file_too_large',
        '"big.bin" is 2000 bytes, more than the limit of 1000',
      );
    });

    it('refuses a member whose declared size exceeds the caps (no data needed)', async () => {
      const error = await refused(
        craftArchive(manifestFor({}), [{ path: 'huge.bin', size: 4 * 1024 * MiB }], { end: false }),
      );
      expectProblem(error, 'file_too_large', /"huge\.bin" is 4294967296 bytes/);
    });

    it('refuses members that together exceed maxUnpackedBytes', async () => {
      const files = { 'a.bin': 'a'.repeat(600 * KiB), 'b.bin': 'b'.repeat(600 * KiB) };
      const error = await refused(archive(files, []), { maxUnpackedBytes: MiB });
      expectProblem(error, 'unpacked_too_large', /reached at "b\.bin"/);
    });

    it('refuses a gzip bomb of zeros beyond maxUnpackedBytes', async () => {
      // 32 MiB of zeros compress to ~32 KiB; the tar parser would stop at the first two zero
      // blocks, so only the decompressed-byte counter catches it.
      const bomb = gzipSync(Buffer.alloc(32 * MiB));
      expect(bomb.length).toBeLessThan(64 * KiB);
      const error = await refused(bomb, { maxUnpackedBytes: MiB, maxFiles: 10 });
      expectProblem(error, 'unpacked_too_large', /decompression bomb/);
    });

    it('refuses a zero-filled member after a valid manifest beyond maxUnpackedBytes', async () => {
      const zeros = Buffer.alloc(4 * MiB);
      const bytes = craftArchive(manifestFor({ 'zeros.bin': zeros }), [
        { path: 'zeros.bin', data: zeros },
      ]);
      const error = await refused(bytes, { maxUnpackedBytes: MiB });
      expectProblem(error, 'file_too_large', /"zeros\.bin" is 4194304 bytes/);
    });

    it('refuses more than maxFiles members', async () => {
      const files = Object.fromEntries(
        Array.from({ length: 12 }, (_, i) => [`f${i}.txt`, String(i)]),
      );
      const error = await refused(archive(files, []), { maxFiles: 10 });
      expectProblem(error, 'too_many_files', 'more than 10 members');
    });
  });

  describe('damaged or foreign data', () => {
    it('refuses a truncated archive', async () => {
      const { path: good } = await writeModelArchive({
        outDir: join(root, 'tmp-out'),
        files: { 'nlu/model.json': 'x'.repeat(50 * KiB) + Math.random().toString(36) },
        fingerprint: fingerprint({}, SERVER.parleyVersion),
        ...SERVER,
      });
      const bytes = await readFile(good);
      await rm(join(root, 'tmp-out'), { recursive: true });
      const error = await refused(bytes.subarray(0, Math.floor(bytes.length / 2)));
      expectProblem(error, 'truncated', /ends unexpectedly \(truncated file\?\)/);
    });

    it('refuses a complete gzip around a truncated tar', async () => {
      const tar = rawTar([
        { path: 'manifest.json', data: JSON.stringify(manifestFor({ 'a.bin': 'x'.repeat(4000) })) },
        { path: 'a.bin', data: 'x'.repeat(4000) },
      ]);
      const error = await refused(gzipSync(tar.subarray(0, 2048)));
      expectProblem(error, 'truncated', /truncated/);
    });

    it('refuses a file that is not gzip (a plain tar)', async () => {
      const error = await refused(rawTar([{ path: 'manifest.json', data: '{}' }]));
      expectProblem(error, 'not_gzip', 'not a gzip file');
    });

    it('refuses an empty file', async () => {
      expectProblem(await refused(Buffer.alloc(0)), 'not_gzip', 'the file is empty');
    });

    it('refuses gzip data that is not a tar', async () => {
      const error = await refused(gzipSync(Buffer.from('hello, this is not a tar archive')));
      expectProblem(error, 'not_tar', 'not a tar archive');
    });

    it('refuses nested compression (gzip inside gzip)', async () => {
      const inner = archive({ 'domain.yml': DOMAIN }, []);
      const error = await refused(gzipSync(inner));
      expectProblem(error, 'nested_compression', 'compressed again');
    });

    it('refuses corrupt gzip data', async () => {
      const bytes = Buffer.from(archive({ 'domain.yml': DOMAIN.repeat(100) }, []));
      bytes.writeUInt32LE(
        (bytes.readUInt32LE(bytes.length - 8) ^ 0xffffffff) >>> 0,
        bytes.length - 8,
      );
      const error = await refused(bytes);
      expectProblem(error, 'corrupt', /corrupt gzip data/);
    });

    it('refuses a tar header with a bad checksum', async () => {
      const tar = rawTar([
        { path: 'manifest.json', data: JSON.stringify(manifestFor({})) },
        { path: 'x.txt', data: 'x' },
      ]);
      const second = 1024; // the manifest is shorter than one block
      tar.writeUInt8(tar.readUInt8(second) ^ 0x01, second); // flip a bit of the second header
      const error = await refused(gzipSync(tar));
      expectProblem(error, 'corrupt', /checksum/);
    });

    it('refuses a missing path (not a file)', async () => {
      await expect(readModelArchive(join(models, 'nope.tar.gz'), SERVER)).rejects.toMatchObject({
        code: 'MODEL.INVALID_ARCHIVE',
        details: { reason: 'not_found' },
      });
      await expect(readModelArchive(models, SERVER)).rejects.toMatchObject({
        details: { reason: 'not_a_file' },
      });
    });
  });

  describe('manifest and checksums', () => {
    it('refuses an archive without manifest.json', async () => {
      const error = await refused(craftArchive(null, [{ path: 'domain.yml', data: DOMAIN }]));
      expectProblem(error, 'missing_manifest', 'no manifest.json');
    });

    it('refuses an unknown format_version', async () => {
      const error = await refused(craftArchive(manifestFor({}, { format_version: 2 }), []));
      expectProblem(error, 'unknown_format_version', 'format_version 2 is not supported');
    });

    it.each([
      [{ format: 'rasa' }, 'format must be "parley-model"'],
      [{ model_id: 'xyz' }, 'model_id must be 32 lowercase hex digits'],
      [{ trained_at: '2024-05-01 12:00' }, 'trained_at must be an ISO 8601 UTC timestamp'],
      [{ parley_version: 'latest' }, 'parley_version must be a semantic version'],
      [{ components: [1] }, 'components must be a list of strings'],
      [{ files: { '../x': sha256('x') } }, 'is not a valid member path'],
      [{ files: { 'a.txt': 'nope' } }, 'checksum of "a.txt" must be a SHA-256'],
    ])('refuses the malformed manifest %j', async (override, message) => {
      const error = await refused(craftArchive(manifestFor({}, override), []));
      expectProblem(error, 'invalid_manifest', message);
    });

    it('refuses a manifest that is not JSON', async () => {
      const error = await refused(
        gzipSync(rawTar([{ path: 'manifest.json', data: '{"format": "parley-model",' }])),
      );
      expectProblem(error, 'invalid_manifest', 'not valid UTF-8 JSON');
    });

    it('refuses a checksum mismatch', async () => {
      const manifest = manifestFor({ 'domain.yml': DOMAIN });
      const error = await refused(
        craftArchive(manifest, [{ path: 'domain.yml', data: 'intents: [evil]\n' }]),
      );
      expectProblem(error, 'checksum_mismatch', `the manifest says ${sha256(DOMAIN)}`);
    });

    it('refuses a listed member that is missing', async () => {
      const error = await refused(craftArchive(manifestFor({ 'domain.yml': DOMAIN }), []));
      expectProblem(error, 'missing_file', '"domain.yml" listed in the manifest is missing');
    });

    it('refuses a member that the manifest does not list', async () => {
      const error = await refused(
        craftArchive(manifestFor({}), [{ path: 'smuggled.py', data: 'import os' }]),
      );
      expectProblem(error, 'unlisted_file', '"smuggled.py" is not listed');
    });

    it.each([
      [
        { parley_version: '1.1.9' },
        /trained with Parley 1\.1\.9, older than the minimum compatible version 1\.2\.0/,
      ],
      [
        { parley_version: '2.0.0' },
        /trained with Parley 2\.0\.0, a newer major version than this server \(1\.4\.2\)/,
      ],
      [
        { parley_version: '1.5.0', minimum_compatible_version: '1.5.0' },
        /requires Parley 1\.5\.0 or newer, this server is 1\.4\.2/,
      ],
    ])('refuses an incompatible model %j', async (override, message) => {
      const error = await refused(craftArchive(manifestFor({}, override), []));
      expect(error.code).toBe('MODEL.INCOMPATIBLE');
      expect(error.details['reason']).toBe('incompatible');
      expect(error.message).toMatch(message);
    });

    it('accepts a newer minor model whose minimum this server meets', async () => {
      const path = join(models, 'newer-minor.tar.gz');
      await writeFile(path, craftArchive(manifestFor({}, { parley_version: '1.9.0' }), []));
      await expect(readModelArchive(path, SERVER)).resolves.toMatchObject({
        manifest: { parley_version: '1.9.0' },
      });
    });

    it('readModelManifest stops at the manifest and does not check the rest', async () => {
      const path = join(models, 'partial.tar.gz');
      await writeFile(
        path,
        craftArchive(manifestFor({ 'domain.yml': DOMAIN }), [
          { path: 'domain.yml', data: 'changed' },
        ]),
      );
      await expect(readModelManifest(path)).resolves.toMatchObject({ format: 'parley-model' });
      await expect(readModelArchive(path, SERVER)).rejects.toMatchObject({
        details: { reason: 'checksum_mismatch' },
      });
    });
  });
});
