import { lstat, realpath } from 'node:fs/promises';
import { DialogueError } from 'src/core/errors/dialogue-error';
import { archiveError } from 'src/core/model-archive/archive-error';

/** A local model path that may be read: a regular file or a directory, symlinks resolved. */
export interface CheckedModelPath {
  /** The real path (symlinks resolved) to open. */
  readonly path: string;
  readonly kind: 'file' | 'directory';
}

/** Pseudo file systems whose entries are never model files (reads may block or never end). */
const PSEUDO_ROOTS = ['/proc/', '/sys/', '/dev/'];

/**
 * Checks a local model path before anything opens it: only a regular file or a directory is
 * accepted; a FIFO, a socket, a device or an entry of `/proc`, `/sys` or `/dev` is refused
 * (`MODEL.INVALID_ARCHIVE`, reason `special_file`) — opening or reading those can block a
 * thread of the I/O pool for good. A symbolic link is followed (its real path is checked the
 * same way and returned), so that model directories may link to archives kept elsewhere.
 * A path that does not exist is `MODEL.INVALID_ARCHIVE` with reason `not_found`.
 */
export async function checkLocalModelPath(path: string): Promise<CheckedModelPath> {
  let real: string;
  try {
    const link = await lstat(path);
    real = link.isSymbolicLink() ? await realpath(path) : path;
  } catch (error) {
    throw notFound(path, error);
  }
  if (PSEUDO_ROOTS.some((root) => `${real}/`.startsWith(root))) {
    throw archiveError(path, 'special_file', `${real} is a system pseudo-file, not a model`);
  }
  let kind: 'file' | 'directory';
  try {
    const target = await lstat(real);
    if (target.isFile()) kind = 'file';
    else if (target.isDirectory()) kind = 'directory';
    else {
      throw archiveError(
        path,
        'special_file',
        `not a regular file or directory (${describe(target)}); only model archives and ` +
          'directories of them are read',
      );
    }
  } catch (error) {
    if (error instanceof DialogueError) throw error;
    throw notFound(path, error);
  }
  return { path: real, kind };
}

function notFound(path: string, error: unknown): DialogueError {
  const code =
    error !== null && typeof error === 'object' ? (error as { code?: unknown }).code : undefined;
  return code === 'ENOENT' || code === 'ENOTDIR'
    ? archiveError(path, 'not_found', 'the file does not exist')
    : archiveError(path, 'unreadable', `the path cannot be examined (${String(code ?? error)})`);
}

function describe(stat: {
  isFIFO(): boolean;
  isSocket(): boolean;
  isCharacterDevice(): boolean;
  isBlockDevice(): boolean;
}): string {
  if (stat.isFIFO()) return 'a FIFO';
  if (stat.isSocket()) return 'a socket';
  if (stat.isCharacterDevice()) return 'a character device';
  if (stat.isBlockDevice()) return 'a block device';
  return 'a special file';
}
