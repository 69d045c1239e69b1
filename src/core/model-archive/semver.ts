/**
 * The small part of Semantic Versioning 2.0.0 the model archive needs: parsing `MAJOR.MINOR.PATCH`
 * with an optional pre-release and build metadata, and precedence comparison.
 */
export interface SemVer {
  readonly major: number;
  readonly minor: number;
  readonly patch: number;
  /** Pre-release identifiers (`1.0.0-rc.1` → `['rc', '1']`); empty for a release. */
  readonly prerelease: readonly string[];
}

const SEMVER =
  /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$/;

/** Parses a semantic version; `null` when the text is not one. */
export function parseSemVer(text: string): SemVer | null {
  const match = SEMVER.exec(text);
  if (!match) return null;
  const [, major, minor, patch, pre] = match;
  const numbers = [major, minor, patch].map(Number);
  if (numbers.some((n) => !Number.isSafeInteger(n))) return null;
  return {
    major: numbers[0] ?? 0,
    minor: numbers[1] ?? 0,
    patch: numbers[2] ?? 0,
    prerelease: pre === undefined ? [] : pre.split('.'),
  };
}

function compareIdentifiers(a: string, b: string): number {
  const aNumeric = /^\d+$/.test(a);
  const bNumeric = /^\d+$/.test(b);
  if (aNumeric && bNumeric) return Math.sign(Number(a) - Number(b));
  if (aNumeric) return -1;
  if (bNumeric) return 1;
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Precedence of two versions (SemVer §11): negative, zero or positive. Build metadata is ignored. */
export function compareSemVer(a: SemVer, b: SemVer): number {
  const core = a.major - b.major || a.minor - b.minor || a.patch - b.patch;
  if (core !== 0) return Math.sign(core);
  if (a.prerelease.length === 0 || b.prerelease.length === 0) {
    return Math.sign(b.prerelease.length - a.prerelease.length);
  }
  const length = Math.min(a.prerelease.length, b.prerelease.length);
  for (let i = 0; i < length; i++) {
    const order = compareIdentifiers(a.prerelease[i] ?? '', b.prerelease[i] ?? '');
    if (order !== 0) return order;
  }
  return Math.sign(a.prerelease.length - b.prerelease.length);
}
