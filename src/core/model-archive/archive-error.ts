import { DialogueError } from 'src/core/errors/dialogue-error';

/** Machine-readable reason of an invalid model archive (`details.reason` of the error). */
export type ArchiveProblem =
  | 'not_found'
  | 'not_a_file'
  | 'unreadable'
  | 'too_large'
  | 'not_gzip'
  | 'corrupt'
  | 'truncated'
  | 'not_tar'
  | 'nested_compression'
  | 'unpacked_too_large'
  | 'file_too_large'
  | 'ratio_too_high'
  | 'special_file'
  | 'too_many_files'
  | 'absolute_path'
  | 'path_traversal'
  | 'invalid_path'
  | 'duplicate_path'
  | 'symlink'
  | 'hardlink'
  | 'device'
  | 'fifo'
  | 'unsupported_entry'
  | 'missing_manifest'
  | 'invalid_manifest'
  | 'unknown_format_version'
  | 'checksum_mismatch'
  | 'missing_file'
  | 'unlisted_file'
  | 'invalid_version';

/** `MODEL.INVALID_ARCHIVE` naming the archive, the problem and its machine-readable reason. */
export function archiveError(
  archive: string,
  reason: ArchiveProblem,
  problem: string,
  details: Record<string, unknown> = {},
): DialogueError {
  return new DialogueError(
    'MODEL.INVALID_ARCHIVE',
    `Invalid model archive ${archive}: ${problem}`,
    {
      archive,
      reason,
      ...details,
    },
  );
}

/** Quotes a value taken from an archive for an error message (JSON, cut at 200 characters). */
export function quote(value: string): string {
  const json = JSON.stringify(value);
  return json.length > 200 ? `${json.slice(0, 199)}…"` : json;
}
