import { type ArchiveProblem } from 'src/core/model-archive/archive-error';

/** Longest accepted path of an archive member, in characters. */
export const MAX_MEMBER_PATH_LENGTH = 1024;

export type MemberPathCheck =
  | { readonly ok: true; readonly path: string }
  | {
      readonly ok: false;
      readonly reason: Extract<ArchiveProblem, 'absolute_path' | 'path_traversal' | 'invalid_path'>;
      readonly problem: string;
    };

/**
 * Checks the path of an archive member and returns its normal form (`/`-separated, no `.` or
 * empty segments, no trailing slash). Refuses absolute paths (`/x`, `C:\x`, `C:x`), `..`
 * segments, backslashes, control characters and over-long paths. The normal form of `.` or
 * `./` is the empty string (the archive root).
 */
export function checkMemberPath(raw: string): MemberPathCheck {
  if (raw.length > MAX_MEMBER_PATH_LENGTH) {
    return { ok: false, reason: 'invalid_path', problem: 'the path is too long' };
  }
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(raw)) {
    return { ok: false, reason: 'invalid_path', problem: 'the path contains control characters' };
  }
  if (raw.startsWith('/') || /^[A-Za-z]:/.test(raw)) {
    return { ok: false, reason: 'absolute_path', problem: 'the path is absolute' };
  }
  if (raw.includes('\\')) {
    return { ok: false, reason: 'invalid_path', problem: 'the path contains a backslash' };
  }
  const segments = raw.split('/').filter((s) => s !== '' && s !== '.');
  if (segments.includes('..')) {
    return {
      ok: false,
      reason: 'path_traversal',
      problem: 'the path has a parent-directory (..) segment',
    };
  }
  return { ok: true, path: segments.join('/') };
}

/** True when `raw` is already a normal, non-empty member path (what writers must pass). */
export function isCanonicalMemberPath(raw: string): boolean {
  const check = checkMemberPath(raw);
  return check.ok && check.path !== '' && check.path === raw;
}
