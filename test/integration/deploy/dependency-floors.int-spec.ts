import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Minimum versions of the parsers that read untrusted input, for every copy the lockfile
 * installs (nested copies included): yaml ≥ 2.8.3 (alias and nesting limits), tar ≥ 7.5.21
 * (path and link handling fixes).
 */
const FLOORS: Record<string, [number, number, number]> = {
  yaml: [2, 8, 3],
  tar: [7, 5, 21],
};

function atLeast(version: string, floor: [number, number, number]): boolean {
  const parts = version.split(/[.+-]/).slice(0, 3).map(Number);
  for (let i = 0; i < 3; i++) {
    if ((parts[i] ?? 0) !== floor[i]) return (parts[i] ?? 0) > floor[i]!;
  }
  return true;
}

describe('package-lock.json: versions of the untrusted-input parsers', () => {
  const lock = JSON.parse(
    readFileSync(join(__dirname, '..', '..', '..', 'package-lock.json'), 'utf8'),
  ) as {
    packages: Record<string, { version?: string; dev?: boolean }>;
  };

  for (const [name, floor] of Object.entries(FLOORS)) {
    it(`every installed ${name} is at least ${floor.join('.')}`, () => {
      const copies = Object.entries(lock.packages).filter(([path]) =>
        path.endsWith(`node_modules/${name}`),
      );
      expect(copies.length).toBeGreaterThan(0);
      const below = copies.filter(([, entry]) => !atLeast(entry.version ?? '0.0.0', floor));
      expect(below).toEqual([]);
    });
  }
});
