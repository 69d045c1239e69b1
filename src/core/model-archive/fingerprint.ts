import { createHash } from 'node:crypto';
import { DialogueError } from 'src/core/errors/dialogue-error';
import { parseSemVer } from 'src/core/model-archive/semver';

/**
 * Canonical JSON of a value: object keys sorted (recursively), no whitespace, `undefined`
 * properties dropped. Use it to canonicalise parsed training data, config or domain before
 * fingerprinting, so that key order and formatting of the source files do not matter.
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value)) ?? 'null';
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map((item) => sortKeys(item) ?? null);
  if (value !== null && typeof value === 'object') {
    const source = value as Record<string, unknown>;
    const sorted: Record<string, unknown> = {};
    for (const key of Object.keys(source).sort()) {
      const item = source[key];
      if (item !== undefined) sorted[key] = sortKeys(item);
    }
    return sorted;
  }
  return value;
}

/** Text canonicalisation applied to every fingerprint part: no BOM, `\n` line endings. */
function canonicalText(text: string): string {
  return text.replace(/^\uFEFF/, '').replace(/\r\n?/g, '\n');
}

/**
 * Fingerprint of a training run (Rasa's model fingerprint): SHA-256 (hex) over the parts
 * (training data, config, domain, …) sorted by key, with BOMs removed and line endings
 * normalised to `\n`, plus the `major.minor` of the Parley version — a patch release does not
 * invalidate models, a minor one does. Unchanged inputs give the same fingerprint.
 */
export function fingerprint(
  parts: Readonly<Record<string, string>>,
  parleyVersion: string,
): string {
  const version = parseSemVer(parleyVersion);
  if (!version) {
    throw new DialogueError(
      'MODEL.INVALID_ARCHIVE',
      `cannot fingerprint the model: Parley version ${JSON.stringify(parleyVersion)} is not a semantic version`,
      { reason: 'invalid_version' },
    );
  }
  const entries = Object.keys(parts)
    .sort()
    .map((key) => [key, canonicalText(parts[key] ?? '')]);
  const payload = JSON.stringify({
    parley: `${version.major}.${version.minor}`,
    parts: entries,
  });
  return createHash('sha256').update(payload, 'utf8').digest('hex');
}
