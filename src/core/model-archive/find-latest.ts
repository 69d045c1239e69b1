import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { DialogueError } from 'src/core/errors/dialogue-error';
import {
  checkCompatibility,
  type ModelManifest,
  type ParleyCompatibility,
} from 'src/core/model-archive/manifest';
import { MODEL_ARCHIVE_SUFFIX } from 'src/core/model-archive/model-name';
import { readModelManifest, type ArchiveLimits } from 'src/core/model-archive/read-archive';

export interface FindModelOptions extends ArchiveLimits {
  /** When given, archives this server cannot load are skipped too. */
  readonly compatibility?: ParleyCompatibility;
}

export interface SkippedModelArchive {
  readonly path: string;
  /** `details.reason` of the error (`not_gzip`, `missing_manifest`, `incompatible`, …). */
  readonly reason: string;
  readonly message: string;
}

export interface ModelDirectoryScan {
  /** The archive with the newest manifest `trained_at`, or `null`. */
  readonly latest: { readonly path: string; readonly manifest: ModelManifest } | null;
  /** Archives that were not considered, with the reason. */
  readonly skipped: readonly SkippedModelArchive[];
}

function skippedFrom(path: string, error: unknown): SkippedModelArchive {
  if (error instanceof DialogueError) {
    const reason = error.details['reason'];
    return {
      path,
      reason: typeof reason === 'string' ? reason : error.code,
      message: error.message,
    };
  }
  return {
    path,
    reason: 'unreadable',
    message: error instanceof Error ? error.message : String(error),
  };
}

/**
 * Looks at every `*.tar.gz` directly in `dir` and picks the one whose manifest `trained_at` is
 * the newest — file times are ignored (Rasa uses the ctime, which copies and restores
 * change). Ties go to the greatest file name. Only manifests are read (and the members before
 * them, normally none); archives whose manifest cannot be read are skipped and reported. A
 * missing directory has no models.
 */
export async function scanModelDirectory(
  dir: string,
  opts: FindModelOptions = {},
): Promise<ModelDirectoryScan> {
  let names: string[];
  try {
    const entries = await readdir(dir, { withFileTypes: true });
    names = entries
      .filter((e) => (e.isFile() || e.isSymbolicLink()) && e.name.endsWith(MODEL_ARCHIVE_SUFFIX))
      .map((e) => e.name)
      .sort();
  } catch (error) {
    // Not `instanceof Error`: errors of Node's core may come from another realm.
    if ((error as NodeJS.ErrnoException | null)?.code === 'ENOENT') {
      return { latest: null, skipped: [] };
    }
    throw error;
  }
  let latest: { path: string; manifest: ModelManifest; time: number } | null = null;
  const skipped: SkippedModelArchive[] = [];
  for (const name of names) {
    const path = join(dir, name);
    try {
      const manifest = await readModelManifest(path, opts);
      if (opts.compatibility) checkCompatibility(manifest, opts.compatibility, path);
      const time = Date.parse(manifest.trained_at);
      // Names are visited in ascending order, so `>=` lets the greatest name win a tie.
      if (latest === null || time >= latest.time) latest = { path, manifest, time };
    } catch (error) {
      skipped.push(skippedFrom(path, error));
    }
  }
  return {
    latest: latest === null ? null : { path: latest.path, manifest: latest.manifest },
    skipped,
  };
}

/** Path of the archive in `dir` with the newest manifest `trained_at`, or `null` (see `scanModelDirectory`). */
export async function findLatestModel(
  dir: string,
  opts: FindModelOptions = {},
): Promise<string | null> {
  return (await scanModelDirectory(dir, opts)).latest?.path ?? null;
}
