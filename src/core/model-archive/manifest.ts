import { DialogueError } from 'src/core/errors/dialogue-error';
import { archiveError, quote } from 'src/core/model-archive/archive-error';
import { isCanonicalMemberPath } from 'src/core/model-archive/archive-path';
import { compareSemVer, parseSemVer, type SemVer } from 'src/core/model-archive/semver';

/** Path of the manifest inside every archive; written as the first member. */
export const MANIFEST_PATH = 'manifest.json';
/** `format` of a Parley model manifest. */
export const MODEL_FORMAT = 'parley-model';
/** The manifest version this code writes. */
export const MODEL_FORMAT_VERSION = 1;
/** Manifest versions this code reads. */
export const KNOWN_FORMAT_VERSIONS: readonly number[] = [1];

/** The `manifest.json` of a model archive (snake_case, as stored). */
export interface ModelManifest {
  readonly format: typeof MODEL_FORMAT;
  readonly format_version: number;
  /** Random UUID, 32 lowercase hex digits without dashes. */
  readonly model_id: string;
  /** SHA-256 (hex) of the training inputs, see `fingerprint()`. */
  readonly fingerprint: string;
  /** `assistant_id` of the config the model was trained with, if any. */
  readonly assistant_id: string | null;
  /** Parley version that trained the model (SemVer). */
  readonly parley_version: string;
  /** Oldest Parley version that can load the model (SemVer). */
  readonly minimum_compatible_version: string;
  /** Training time, ISO 8601 in UTC (`2024-05-01T12:00:00.000Z`). */
  readonly trained_at: string;
  /** Names of the trained components (NLU pipeline steps, policies, …). */
  readonly components: readonly string[];
  /** SHA-256 (hex) of every other member, by archive path, keys sorted. */
  readonly files: Readonly<Record<string, string>>;
}

/** The versions of the running server a model is checked against. */
export interface ParleyCompatibility {
  /** Version of the running Parley (SemVer). */
  readonly parleyVersion: string;
  /** Oldest model `parley_version` this server still loads (SemVer). */
  readonly minimumCompatibleVersion: string;
}

const HEX32 = /^[0-9a-f]{32}$/;
const HEX64 = /^[0-9a-f]{64}$/;
const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?Z$/;

export function isSha256Hex(value: string): boolean {
  return HEX64.test(value);
}

export function isModelId(value: string): boolean {
  return HEX32.test(value);
}

/** True for an ISO 8601 UTC timestamp (`Z` suffix) naming a real instant. */
export function isIsoUtc(value: string): boolean {
  return ISO_UTC.test(value) && !Number.isNaN(Date.parse(value));
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/**
 * Parses and validates `manifest.json`: JSON object, `format` `parley-model`, a known
 * `format_version` (checked before anything else, so that a newer format is reported as such),
 * well-formed ids, versions, timestamp, components and file checksums. Unknown keys are
 * ignored (a tolerant reader) and not returned.
 */
export function parseManifest(data: Buffer, archive: string): ModelManifest {
  const invalid = (problem: string): never => {
    throw archiveError(archive, 'invalid_manifest', `${MANIFEST_PATH}: ${problem}`);
  };
  let json: unknown;
  try {
    json = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(data));
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return invalid(`not valid UTF-8 JSON (${message})`);
  }
  if (!isRecord(json)) return invalid('must be a JSON object');
  if (json['format'] !== MODEL_FORMAT) {
    return invalid(
      `format must be ${quote(MODEL_FORMAT)}, got ${JSON.stringify(json['format']) ?? 'nothing'}`,
    );
  }
  const formatVersion = json['format_version'];
  if (typeof formatVersion !== 'number' || !Number.isSafeInteger(formatVersion)) {
    return invalid('format_version must be an integer');
  }
  if (!KNOWN_FORMAT_VERSIONS.includes(formatVersion)) {
    throw archiveError(
      archive,
      'unknown_format_version',
      `${MANIFEST_PATH}: format_version ${formatVersion} is not supported by this Parley ` +
        `(supported: ${KNOWN_FORMAT_VERSIONS.join(', ')}); upgrade Parley or retrain the model`,
      { format_version: formatVersion },
    );
  }
  const text = (key: keyof ModelManifest, test: (v: string) => boolean, what: string) => {
    const value = json[key];
    if (typeof value !== 'string' || !test(value)) return invalid(`${key} must be ${what}`);
    return value;
  };
  const modelId = text('model_id', isModelId, '32 lowercase hex digits');
  const fingerprint = text('fingerprint', isSha256Hex, 'a SHA-256 in lowercase hex');
  const parleyVersion = text(
    'parley_version',
    (v) => parseSemVer(v) !== null,
    'a semantic version',
  );
  const minimumVersion = text(
    'minimum_compatible_version',
    (v) => parseSemVer(v) !== null,
    'a semantic version',
  );
  const trainedAt = text('trained_at', isIsoUtc, 'an ISO 8601 UTC timestamp');

  const assistantId = json['assistant_id'] ?? null;
  if (assistantId !== null && typeof assistantId !== 'string') {
    invalid('assistant_id must be a string or null');
  }
  const components = json['components'];
  if (!Array.isArray(components) || !components.every((c) => typeof c === 'string')) {
    return invalid('components must be a list of strings');
  }
  const files = json['files'];
  if (!isRecord(files)) return invalid('files must be an object of path → sha256');
  const entries: [string, string][] = [];
  for (const [path, digest] of Object.entries(files)) {
    if (!isCanonicalMemberPath(path) || path === MANIFEST_PATH) {
      invalid(`files: ${quote(path)} is not a valid member path`);
    }
    if (typeof digest !== 'string' || !isSha256Hex(digest)) {
      invalid(`files: the checksum of ${quote(path)} must be a SHA-256 in lowercase hex`);
    }
    entries.push([path, digest as string]);
  }
  entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return {
    format: MODEL_FORMAT,
    format_version: formatVersion,
    model_id: modelId,
    fingerprint,
    assistant_id: assistantId as string | null,
    parley_version: parleyVersion,
    minimum_compatible_version: minimumVersion,
    trained_at: trainedAt,
    components: [...components],
    files: Object.fromEntries(entries),
  };
}

function serverVersion(text: string, what: string): SemVer {
  const version = parseSemVer(text);
  if (!version) {
    throw new DialogueError(
      'MODEL.INCOMPATIBLE',
      `Cannot check model compatibility: ${what} ${JSON.stringify(text)} is not a semantic version`,
      { reason: 'invalid_version' },
    );
  }
  return version;
}

/**
 * Refuses (`MODEL.INCOMPATIBLE`) a model that this server must not load:
 * - trained with a Parley older than our `minimumCompatibleVersion` (retrain it);
 * - trained with a newer **major** Parley than ours;
 * - whose own `minimum_compatible_version` is newer than our `parleyVersion`.
 */
export function checkCompatibility(
  manifest: Pick<ModelManifest, 'parley_version' | 'minimum_compatible_version'>,
  server: ParleyCompatibility,
  archive = 'model',
): void {
  const ours = serverVersion(server.parleyVersion, 'parleyVersion');
  const oldest = serverVersion(server.minimumCompatibleVersion, 'minimumCompatibleVersion');
  const model = parseSemVer(manifest.parley_version);
  const modelMinimum = parseSemVer(manifest.minimum_compatible_version);
  const fail = (problem: string): never => {
    throw new DialogueError('MODEL.INCOMPATIBLE', `Model archive ${archive} ${problem}`, {
      archive,
      reason: 'incompatible',
      model_parley_version: manifest.parley_version,
      model_minimum_compatible_version: manifest.minimum_compatible_version,
      parley_version: server.parleyVersion,
      minimum_compatible_version: server.minimumCompatibleVersion,
    });
  };
  if (!model || !modelMinimum) {
    return fail('has no valid parley_version / minimum_compatible_version');
  }
  if (compareSemVer(model, oldest) < 0) {
    fail(
      `was trained with Parley ${manifest.parley_version}, older than the minimum compatible ` +
        `version ${server.minimumCompatibleVersion} of this server; retrain the model`,
    );
  }
  if (model.major > ours.major) {
    fail(
      `was trained with Parley ${manifest.parley_version}, a newer major version than this ` +
        `server (${server.parleyVersion}); upgrade Parley`,
    );
  }
  if (compareSemVer(modelMinimum, ours) > 0) {
    fail(
      `requires Parley ${manifest.minimum_compatible_version} or newer, this server is ` +
        `${server.parleyVersion}; upgrade Parley`,
    );
  }
}
