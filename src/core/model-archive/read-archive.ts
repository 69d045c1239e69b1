import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { createGunzip } from 'node:zlib';
import { DialogueError } from 'src/core/errors/dialogue-error';
import { archiveError, quote, type ArchiveProblem } from 'src/core/model-archive/archive-error';
import { checkMemberPath } from 'src/core/model-archive/archive-path';
import { checkLocalModelPath } from 'src/core/model-archive/local-path';
import {
  MANIFEST_PATH,
  checkCompatibility,
  parseManifest,
  type ModelManifest,
  type ParleyCompatibility,
} from 'src/core/model-archive/manifest';
import { Parser, type ReadEntry } from 'tar';

/** Resource limits applied while reading an archive (all in bytes except `maxFiles`). */
export interface ArchiveLimits {
  /** Size of the compressed file. Default 500 MiB. */
  readonly maxBytes?: number;
  /** Number of members (files and directories). Default 1000. */
  readonly maxFiles?: number;
  /** Sum of the sizes of all members once unpacked. Default 2 GiB. */
  readonly maxUnpackedBytes?: number;
  /** Size of a single member once unpacked. Default 512 MiB (at most `maxUnpackedBytes`). */
  readonly maxFileBytes?: number;
  /**
   * Bytes inflated per compressed byte read, checked once more than 1 MiB is inflated
   * (decompression bombs). Default 200.
   */
  readonly maxCompressionRatio?: number;
}

export interface ReadModelArchiveOptions extends ArchiveLimits, ParleyCompatibility {}

export interface ModelArchiveContents {
  readonly manifest: ModelManifest;
  /** Every member except `manifest.json`, by normalised archive path; checksums verified. */
  readonly files: Map<string, Buffer>;
}

export const DEFAULT_MAX_BYTES = 500 * 1024 * 1024;
export const DEFAULT_MAX_FILES = 1000;
export const DEFAULT_MAX_UNPACKED_BYTES = 1024 * 1024 * 1024;
export const DEFAULT_MAX_FILE_BYTES = 512 * 1024 * 1024;
export const DEFAULT_MAX_COMPRESSION_RATIO = 200;
/** Inflated bytes below which the compression ratio is not checked (headers, small files). */
const RATIO_FLOOR_BYTES = 1024 * 1024;

/** Largest pax / GNU long-name meta entry accepted; bigger ones are refused. */
const MAX_META_ENTRY_BYTES = 64 * 1024;
/** Tar framing (headers, padding, end blocks) allowed on top of `maxUnpackedBytes`. */
const FRAMING_BASE_BYTES = 1024 * 1024;
const FRAMING_PER_MEMBER_BYTES = 8 * 1024;

const GZIP_MAGIC = Buffer.from([0x1f, 0x8b]);
const ZSTD_MAGIC = Buffer.from([0x28, 0xb5, 0x2f, 0xfd]);
/** Bytes of the unpacked stream inspected before the tar parser sees them. */
const SNIFF_BYTES = 512;

interface ResolvedLimits {
  readonly maxBytes: number;
  readonly maxFiles: number;
  readonly maxUnpackedBytes: number;
  readonly maxFileBytes: number;
  readonly maxCompressionRatio: number;
}

function resolveLimits(limits: ArchiveLimits): ResolvedLimits {
  const maxUnpackedBytes = limits.maxUnpackedBytes ?? DEFAULT_MAX_UNPACKED_BYTES;
  return {
    maxBytes: limits.maxBytes ?? DEFAULT_MAX_BYTES,
    maxFiles: limits.maxFiles ?? DEFAULT_MAX_FILES,
    maxUnpackedBytes,
    maxFileBytes: Math.min(limits.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES, maxUnpackedBytes),
    maxCompressionRatio: limits.maxCompressionRatio ?? DEFAULT_MAX_COMPRESSION_RATIO,
  };
}

interface Member {
  /** Normalised archive path. */
  readonly path: string;
  readonly data: Buffer;
}

/** Called for every regular-file member, in archive order. Return `false` to stop reading. */
type Visitor = (member: Member) => boolean;

function errorCode(error: unknown, key: 'code' | 'tarCode'): string | undefined {
  if (error === null || typeof error !== 'object') return undefined;
  const value = (error as Record<string, unknown>)[key];
  return typeof value === 'string' ? value : undefined;
}

/** The message of an error, also of one from another realm (Node core errors under jest). */
function messageOf(error: unknown): string {
  if (error !== null && typeof error === 'object') {
    const message = (error as Record<string, unknown>)['message'];
    if (typeof message === 'string') return message;
  }
  return String(error);
}

function entryProblem(type: string): { reason: ArchiveProblem; what: string } {
  switch (type) {
    case 'SymbolicLink':
      return { reason: 'symlink', what: 'a symbolic link' };
    case 'Link':
      return { reason: 'hardlink', what: 'a hard link' };
    case 'CharacterDevice':
      return { reason: 'device', what: 'a character device' };
    case 'BlockDevice':
      return { reason: 'device', what: 'a block device' };
    case 'FIFO':
      return { reason: 'fifo', what: 'a FIFO' };
    default:
      return { reason: 'unsupported_entry', what: `an unsupported entry (type ${type})` };
  }
}

async function openArchive(archive: string, limits: ResolvedLimits): Promise<FileHandle> {
  const checked = await checkLocalModelPath(archive);
  if (checked.kind !== 'file') throw archiveError(archive, 'not_a_file', 'not a regular file');
  let handle: FileHandle;
  try {
    // Non-blocking: should the path be swapped for a FIFO after the check, opening it still
    // returns at once, and the type check below refuses it.
    handle = await open(checked.path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    if (errorCode(error, 'code') === 'ENOENT') {
      throw archiveError(archive, 'not_found', 'the file does not exist');
    }
    throw archiveError(archive, 'unreadable', `the file cannot be opened (${messageOf(error)})`);
  }
  try {
    const stat = await handle.stat();
    if (!stat.isFile()) throw archiveError(archive, 'not_a_file', 'not a regular file');
    if (stat.size > limits.maxBytes) {
      throw archiveError(
        archive,
        'too_large',
        `the file is ${stat.size} bytes, more than the limit of ${limits.maxBytes} bytes`,
        { size: stat.size, limit: limits.maxBytes },
      );
    }
    const head = Buffer.alloc(GZIP_MAGIC.length);
    const { bytesRead } = await handle.read(head, 0, head.length, 0);
    if (bytesRead === 0) throw archiveError(archive, 'not_gzip', 'the file is empty');
    if (bytesRead < head.length || !head.equals(GZIP_MAGIC)) {
      throw archiveError(archive, 'not_gzip', 'not a gzip file (a model is a .tar.gz)');
    }
    return handle;
  } catch (error) {
    await handle.close();
    throw error;
  }
}

/**
 * Streams a `.tar.gz` entirely in memory and hands every regular file to `visit`. Nothing is
 * ever written to disk. Refuses (MODEL.INVALID_ARCHIVE) anything but gzip-compressed tar,
 * nested compression, members other than regular files and directories (symlinks, hard
 * links, devices, FIFOs, …), absolute or `..` paths, duplicates, too many members, members or
 * a total beyond the limits, bytes beyond the limits once decompressed (decompression bombs),
 * and truncated or corrupt data.
 */
async function scanArchive(archive: string, limits: ResolvedLimits, visit: Visitor): Promise<void> {
  const handle = await openArchive(archive, limits);
  try {
    await new Promise<void>((resolve, reject) => {
      const streamLimit =
        limits.maxUnpackedBytes + FRAMING_BASE_BYTES + FRAMING_PER_MEMBER_BYTES * limits.maxFiles;
      const input = handle.createReadStream({ start: 0, autoClose: false });
      const gunzip = createGunzip();
      const parser = new Parser({
        strict: true,
        brotli: false,
        zstd: false,
        maxMetaEntrySize: MAX_META_ENTRY_BYTES,
      });
      let settled = false;
      let compressedBytes = 0;
      let streamBytes = 0;
      let sniff: Buffer | null = Buffer.alloc(0);
      let members = 0;
      let fileBytes = 0;
      const files = new Set<string>();
      const directories = new Set<string>();
      // Member paths as case-insensitive, normalising file systems (macOS, Windows) see them:
      // two members that are one file there could shadow each other once extracted.
      const folded = new Map<string, string>();

      const finish = (error?: unknown): void => {
        if (settled) return;
        settled = true;
        input.unpipe(gunzip);
        input.destroy();
        gunzip.destroy();
        if (error === undefined) resolve();
        else if (error instanceof DialogueError) reject(error);
        else reject(archiveError(archive, 'unreadable', `cannot be read (${messageOf(error)})`));
      };
      const fail = (
        reason: ArchiveProblem,
        problem: string,
        details: Record<string, unknown> = {},
      ) => finish(archiveError(archive, reason, problem, details));

      const feed = (chunk: Buffer, last: boolean): void => {
        if (sniff !== null) {
          sniff = Buffer.concat([sniff, chunk]);
          if (sniff.length < SNIFF_BYTES && !last) return;
          const head = sniff;
          sniff = null;
          if (
            head.subarray(0, GZIP_MAGIC.length).equals(GZIP_MAGIC) ||
            head.subarray(0, ZSTD_MAGIC.length).equals(ZSTD_MAGIC)
          ) {
            return fail('nested_compression', 'the gzip content is compressed again, not a tar');
          }
          parser.write(head);
          return;
        }
        parser.write(chunk);
      };

      input.on('data', (chunk: Buffer | string) => {
        compressedBytes += chunk.length;
        if (compressedBytes > limits.maxBytes) {
          fail('too_large', `the file grew beyond the limit of ${limits.maxBytes} bytes`);
        }
      });
      input.on('error', (error) => fail('unreadable', `read error (${messageOf(error)})`));
      gunzip.on('error', (error) => {
        if (errorCode(error, 'code') === 'Z_BUF_ERROR') {
          fail('truncated', 'the gzip stream ends unexpectedly (truncated file?)');
        } else {
          fail('corrupt', `corrupt gzip data (${messageOf(error)})`);
        }
      });
      gunzip.on('data', (chunk: Buffer) => {
        if (settled) return;
        streamBytes += chunk.length;
        if (streamBytes > streamLimit) {
          return fail(
            'unpacked_too_large',
            `the archive unpacks to more than ${streamLimit} bytes (maxUnpackedBytes ` +
              `${limits.maxUnpackedBytes} plus tar framing); refusing a possible decompression bomb`,
            { limit: limits.maxUnpackedBytes, limitName: 'maxUnpackedBytes' },
          );
        }
        if (
          streamBytes > RATIO_FLOOR_BYTES &&
          streamBytes > limits.maxCompressionRatio * Math.max(compressedBytes, 1)
        ) {
          return fail(
            'ratio_too_high',
            `the archive inflates more than ${limits.maxCompressionRatio} times its compressed ` +
              `size (maxCompressionRatio); refusing a possible decompression bomb`,
            { limit: limits.maxCompressionRatio, limitName: 'maxCompressionRatio' },
          );
        }
        feed(chunk, false);
      });
      gunzip.on('end', () => {
        if (settled) return;
        if (sniff !== null) feed(Buffer.alloc(0), true);
        if (!settled) parser.end();
      });

      parser.on('error', (error: unknown) => {
        const message = messageOf(error).replace(/^TAR_[A-Z_]+: /, '');
        if (/truncated/i.test(message)) {
          fail('truncated', `the tar data ends inside a member (truncated archive: ${message})`);
        } else if (members === 0) {
          fail('not_tar', `the gzip content is not a tar archive (${message})`);
        } else {
          fail('corrupt', `corrupt tar data after ${members} member(s) (${message})`);
        }
      });
      parser.on('warn', (code: string, message: string) => fail('corrupt', `${code}: ${message}`));
      parser.on('ignoredEntry', (entry: ReadEntry) => {
        entry.resume();
        if (entry.meta) {
          fail(
            'unsupported_entry',
            `a ${entry.type} header larger than ${MAX_META_ENTRY_BYTES} bytes`,
          );
        } else {
          const { reason, what } = entryProblem(entry.type);
          fail(
            reason,
            `member ${quote(entry.path)} is ${what}; only regular files and directories are allowed`,
          );
        }
      });
      parser.on('entry', (entry: ReadEntry) => {
        if (settled) {
          entry.resume();
          return;
        }
        try {
          onEntry(entry);
        } catch (error) {
          entry.resume();
          finish(error);
        }
      });
      parser.on('end', () => finish());

      const onEntry = (entry: ReadEntry): void => {
        members += 1;
        if (members > limits.maxFiles) {
          throw archiveError(archive, 'too_many_files', `more than ${limits.maxFiles} members`, {
            limit: limits.maxFiles,
          });
        }
        const checked = checkMemberPath(entry.path);
        if (!checked.ok) {
          throw archiveError(
            archive,
            checked.reason,
            `member ${quote(entry.path)}: ${checked.problem}`,
            {
              member: entry.path,
            },
          );
        }
        const path = checked.path;
        if (entry.type === 'Directory') {
          if (files.has(path)) {
            throw archiveError(
              archive,
              'duplicate_path',
              `${quote(path)} is both a file and a directory`,
            );
          }
          if (path !== '') directories.add(path);
          entry.resume();
          return;
        }
        if (entry.type !== 'File' && entry.type !== 'OldFile') {
          const { reason, what } = entryProblem(entry.type);
          const target = entry.linkpath === undefined ? '' : ` (to ${quote(entry.linkpath)})`;
          throw archiveError(
            archive,
            reason,
            `member ${quote(path)} is ${what}${target}; only regular files and directories are allowed`,
            { member: path },
          );
        }
        if (path === '') {
          throw archiveError(archive, 'invalid_path', 'a file member has an empty path');
        }
        if (files.has(path) || directories.has(path)) {
          throw archiveError(
            archive,
            'duplicate_path',
            `member ${quote(path)} occurs more than once`,
            {
              member: path,
            },
          );
        }
        const key = path.normalize('NFC').toLowerCase();
        const other = folded.get(key);
        if (other !== undefined) {
          throw archiveError(
            archive,
            'duplicate_path',
            `member ${quote(path)} collides with ${quote(other)} (same name after Unicode normalisation and case folding)`,
            { member: path },
          );
        }
        folded.set(key, path);
        const segments = path.split('/');
        for (let i = 1; i < segments.length; i++) {
          const parent = segments.slice(0, i).join('/');
          if (files.has(parent)) {
            throw archiveError(
              archive,
              'duplicate_path',
              `${quote(parent)} is both a file and a directory`,
            );
          }
          directories.add(parent);
        }
        files.add(path);
        if (entry.size > limits.maxFileBytes) {
          throw archiveError(
            archive,
            'file_too_large',
            `member ${quote(path)} is ${entry.size} bytes, more than the limit of ${limits.maxFileBytes} bytes (maxFileBytes)`,
            {
              member: path,
              size: entry.size,
              limit: limits.maxFileBytes,
              limitName: 'maxFileBytes',
            },
          );
        }
        fileBytes += entry.size;
        if (fileBytes > limits.maxUnpackedBytes) {
          throw archiveError(
            archive,
            'unpacked_too_large',
            `the members unpack to more than the limit of ${limits.maxUnpackedBytes} bytes ` +
              `(maxUnpackedBytes, reached at ${quote(path)})`,
            { member: path, limit: limits.maxUnpackedBytes, limitName: 'maxUnpackedBytes' },
          );
        }
        const chunks: Buffer[] = [];
        let received = 0;
        entry.on('data', (chunk: Buffer) => {
          if (settled) return;
          received += chunk.length;
          // Counted as inflated, whatever the header declared.
          if (received > entry.size || received > limits.maxFileBytes) {
            fail(
              'file_too_large',
              `member ${quote(path)} holds more bytes than its header declares or the limit of ` +
                `${limits.maxFileBytes} bytes (maxFileBytes)`,
              { member: path, limit: limits.maxFileBytes, limitName: 'maxFileBytes' },
            );
            return;
          }
          chunks.push(chunk);
        });
        entry.on('end', () => {
          if (settled) return;
          if (received !== entry.size) {
            return fail('truncated', `member ${quote(path)} is incomplete (truncated archive)`);
          }
          try {
            if (!visit({ path, data: Buffer.concat(chunks, received) })) finish();
          } catch (error) {
            finish(error);
          }
        });
      };

      input.pipe(gunzip);
    });
  } finally {
    await handle.close();
  }
}

function sha256(data: Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

/**
 * Reads and verifies a model archive entirely in memory: gzip + tar only, safe members only,
 * limits on the compressed size, the member count and the unpacked sizes, a well-formed
 * manifest of a known `format_version`, a Parley version this server can load
 * (`MODEL.INCOMPATIBLE` otherwise) and every member's SHA-256 as listed in the manifest (no
 * member missing, none unlisted). Every other failure is `MODEL.INVALID_ARCHIVE` with a precise
 * message and `details.reason`.
 */
export async function readModelArchive(
  path: string,
  opts: ReadModelArchiveOptions,
): Promise<ModelArchiveContents> {
  const limits = resolveLimits(opts);
  let manifest: ModelManifest | undefined;
  const files = new Map<string, Buffer>();
  await scanArchive(path, limits, (member) => {
    if (member.path === MANIFEST_PATH) {
      // Checked as soon as it is seen (it is the first member) so that a foreign or
      // incompatible model fails before the rest is unpacked.
      manifest = parseManifest(member.data, path);
      checkCompatibility(manifest, opts, path);
    } else {
      files.set(member.path, member.data);
    }
    return true;
  });
  if (manifest === undefined) {
    throw archiveError(path, 'missing_manifest', `no ${MANIFEST_PATH} (not a Parley model)`);
  }
  for (const [member, expected] of Object.entries(manifest.files)) {
    const data = files.get(member);
    if (data === undefined) {
      throw archiveError(
        path,
        'missing_file',
        `member ${quote(member)} listed in the manifest is missing`,
        {
          member,
        },
      );
    }
    const actual = sha256(data);
    if (actual !== expected) {
      throw archiveError(
        path,
        'checksum_mismatch',
        `member ${quote(member)} has SHA-256 ${actual}, the manifest says ${expected}`,
        { member, expected, actual },
      );
    }
  }
  for (const member of files.keys()) {
    if (!Object.hasOwn(manifest.files, member)) {
      throw archiveError(
        path,
        'unlisted_file',
        `member ${quote(member)} is not listed in the manifest`,
        {
          member,
        },
      );
    }
  }
  return { manifest, files };
}

/**
 * Reads only the manifest of an archive (stops as soon as it is found, normally the first
 * member), with the same safety checks on the members read so far. Neither compatibility nor
 * checksums are checked: use `readModelArchive` before loading.
 */
export async function readModelManifest(
  path: string,
  limits: ArchiveLimits = {},
): Promise<ModelManifest> {
  let manifest: ModelManifest | undefined;
  await scanArchive(path, resolveLimits(limits), (member) => {
    if (member.path !== MANIFEST_PATH) return true;
    manifest = parseManifest(member.data, path);
    return false;
  });
  if (manifest === undefined) {
    throw archiveError(path, 'missing_manifest', `no ${MANIFEST_PATH} (not a Parley model)`);
  }
  return manifest;
}

/** True when `error` is a model-archive failure (invalid or incompatible archive). */
export function isModelArchiveError(error: unknown): error is DialogueError {
  return (
    error instanceof DialogueError &&
    (error.code === 'MODEL.INVALID_ARCHIVE' || error.code === 'MODEL.INCOMPATIBLE')
  );
}
