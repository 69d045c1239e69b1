import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { constants as fsConstants } from 'node:fs';
import { access, mkdir, mkdtemp, open, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { DialogueError } from 'src/core/errors/dialogue-error';
import { archiveError } from 'src/core/model-archive/archive-error';
import { isCanonicalMemberPath } from 'src/core/model-archive/archive-path';
import {
  MANIFEST_PATH,
  MODEL_FORMAT,
  MODEL_FORMAT_VERSION,
  isModelId,
  isSha256Hex,
  type ModelManifest,
} from 'src/core/model-archive/manifest';
import { fixedModelFileName, generateModelName } from 'src/core/model-archive/model-name';
import { compareSemVer, parseSemVer } from 'src/core/model-archive/semver';
import { create as createTar } from 'tar';

export interface WriteModelArchiveOptions {
  /** Directory the archive is written to (created when missing). */
  readonly outDir: string;
  /**
   * Archive name instead of the generated `YYYYMMDD-HHMMSS-<adjective>-<noun>.tar.gz`;
   * `.tar.gz` is appended when missing. An existing archive of that name is replaced.
   */
  readonly fixedModelName?: string;
  /** Members by archive path (`domain.yml`, `nlu/model.json`, `core/…`); strings are UTF-8. */
  readonly files: Readonly<Record<string, Buffer | string>>;
  /** `fingerprint()` of the training inputs. */
  readonly fingerprint: string;
  /** Version of the Parley that trains (SemVer). */
  readonly parleyVersion: string;
  /** Oldest Parley that can load this model (SemVer, not newer than `parleyVersion`). */
  readonly minimumCompatibleVersion: string;
  readonly assistantId?: string | null;
  readonly components?: readonly string[];
  /** Training time (default: now); names the archive and sets `trained_at` and member mtimes. */
  readonly trainedAt?: Date;
  /** Model id (default: a random UUID as 32 hex digits). */
  readonly modelId?: string;
}

export interface WrittenModelArchive {
  /** Path of the written archive (`outDir` joined with the file name). */
  readonly path: string;
  readonly manifest: ModelManifest;
}

/** How often a generated name is re-drawn when an archive of that name already exists. */
const NAME_ATTEMPTS = 20;

function invalidInput(problem: string): DialogueError {
  return archiveError('(being written)', 'invalid_path', problem);
}

function sha256(data: Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

async function exists(path: string): Promise<boolean> {
  try {
    await access(path, fsConstants.F_OK);
    return true;
  } catch {
    return false;
  }
}

function checkMembers(paths: readonly string[]): void {
  const files = new Set(paths);
  for (const path of paths) {
    if (!isCanonicalMemberPath(path)) {
      throw invalidInput(
        `member path ${JSON.stringify(path)} must be relative, '/'-separated, without '.', '..' or empty segments`,
      );
    }
    if (path === MANIFEST_PATH) {
      throw invalidInput(`member path ${MANIFEST_PATH} is reserved for the manifest`);
    }
    const segments = path.split('/');
    for (let i = 1; i < segments.length; i++) {
      const parent = segments.slice(0, i).join('/');
      if (files.has(parent)) {
        throw invalidInput(`member ${JSON.stringify(parent)} is both a file and a directory`);
      }
    }
  }
}

function checkVersions(opts: WriteModelArchiveOptions): void {
  const version = parseSemVer(opts.parleyVersion);
  const minimum = parseSemVer(opts.minimumCompatibleVersion);
  const fail = (problem: string): never => {
    throw archiveError('(being written)', 'invalid_version', problem);
  };
  if (!version) {
    fail(`parleyVersion ${JSON.stringify(opts.parleyVersion)} is not a semantic version`);
  }
  if (!minimum) {
    fail(
      `minimumCompatibleVersion ${JSON.stringify(opts.minimumCompatibleVersion)} is not a semantic version`,
    );
  }
  if (version && minimum && compareSemVer(minimum, version) > 0) {
    fail(
      `minimumCompatibleVersion ${opts.minimumCompatibleVersion} is newer than parleyVersion ${opts.parleyVersion}`,
    );
  }
}

/**
 * Writes a model archive: a gzip-compressed tar whose first member is `manifest.json`, followed
 * by the given files in path order. The archive is built under a temporary name in `outDir` and
 * renamed into place, so readers never see a partial archive. Generated names use UTC (Rasa
 * uses local time).
 */
export async function writeModelArchive(
  opts: WriteModelArchiveOptions,
): Promise<WrittenModelArchive> {
  const trainedAt = opts.trainedAt ?? new Date();
  if (Number.isNaN(trainedAt.getTime())) throw invalidInput('trainedAt is not a valid date');
  checkVersions(opts);
  if (!isSha256Hex(opts.fingerprint)) {
    throw invalidInput('fingerprint must be a SHA-256 in lowercase hex (see fingerprint())');
  }
  const modelId = opts.modelId ?? randomUUID().replace(/-/g, '');
  if (!isModelId(modelId)) throw invalidInput('modelId must be 32 lowercase hex digits');
  const fixedName =
    opts.fixedModelName === undefined ? undefined : fixedModelFileName(opts.fixedModelName);

  const paths = Object.keys(opts.files).sort();
  checkMembers(paths);
  const contents = new Map<string, Buffer>();
  for (const path of paths) {
    const content = opts.files[path] ?? '';
    contents.set(path, typeof content === 'string' ? Buffer.from(content, 'utf8') : content);
  }
  const manifest: ModelManifest = {
    format: MODEL_FORMAT,
    format_version: MODEL_FORMAT_VERSION,
    model_id: modelId,
    fingerprint: opts.fingerprint,
    assistant_id: opts.assistantId ?? null,
    parley_version: opts.parleyVersion,
    minimum_compatible_version: opts.minimumCompatibleVersion,
    trained_at: trainedAt.toISOString(),
    components: [...(opts.components ?? [])],
    files: Object.fromEntries([...contents].map(([path, data]) => [path, sha256(data)])),
  };

  await mkdir(opts.outDir, { recursive: true });
  const staging = await mkdtemp(join(tmpdir(), 'parley-model-'));
  const temporary = join(opts.outDir, `.parley-model-${randomBytes(8).toString('hex')}.tmp`);
  try {
    await writeFile(join(staging, MANIFEST_PATH), `${JSON.stringify(manifest, null, 2)}\n`);
    for (const [path, data] of contents) {
      const target = join(staging, ...path.split('/'));
      await mkdir(dirname(target), { recursive: true });
      await writeFile(target, data);
    }
    await createTar(
      { gzip: true, file: temporary, cwd: staging, portable: true, mtime: trainedAt },
      [MANIFEST_PATH, ...paths],
    );
    const handle = await open(temporary, 'r+');
    try {
      await handle.datasync();
    } finally {
      await handle.close();
    }
    let target = join(opts.outDir, fixedName ?? generateModelName(trainedAt));
    for (let attempt = 1; fixedName === undefined && (await exists(target)); attempt++) {
      if (attempt >= NAME_ATTEMPTS) {
        throw new DialogueError(
          'MODEL.INVALID_NAME',
          `Could not find a free model name in ${opts.outDir} after ${NAME_ATTEMPTS} attempts`,
          { outDir: opts.outDir },
        );
      }
      target = join(opts.outDir, generateModelName(trainedAt));
    }
    await rename(temporary, target);
    return { path: target, manifest };
  } finally {
    await rm(temporary, { force: true });
    await rm(staging, { recursive: true, force: true });
  }
}
