import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

// The architecture rules of .dependency-cruiser.cjs, run through the depcruise CLI exactly as
// `npm run lint` runs them (dependency-cruiser is ESM-only, so it runs in a child process).

const root = join(__dirname, '..', '..');
const config = join(root, '.dependency-cruiser.cjs');
const depcruise = join(root, 'node_modules', 'dependency-cruiser', 'bin', 'dependency-cruise.mjs');

interface Violation {
  from: string;
  to: string;
  rule: { name: string; severity: string };
}
interface CruiseSummary {
  error: number;
  warn: number;
  violations: Violation[];
}

function cruise(cwd: string): CruiseSummary {
  const run = spawnSync(
    process.execPath,
    [depcruise, 'src', '--config', config, '--output-type', 'json'],
    { cwd, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
  );
  if (!run.stdout) throw new Error(`depcruise printed nothing: ${run.stderr}`);
  return (JSON.parse(run.stdout) as { summary: CruiseSummary }).summary;
}

/** `from → to` of every violation of one rule. */
function hits(summary: CruiseSummary, rule: string): string[] {
  return summary.violations
    .filter((v) => v.rule.name === rule)
    .map((v) => `${v.from} → ${v.to}`)
    .sort();
}

describe('architecture boundaries (.dependency-cruiser.cjs)', () => {
  let tree: string;
  let planted: CruiseSummary;

  beforeAll(() => {
    // A small tree laid out like this repository, with one planted violation per rule and
    // allowed imports beside them (which must not be reported).
    tree = mkdtempSync(join(tmpdir(), 'parley-boundaries-'));
    const files: Record<string, string> = {
      'tsconfig.json': JSON.stringify({
        compilerOptions: { baseUrl: './', paths: { 'src/*': ['src/*'], 'test/*': ['test/*'] } },
      }),
      'src/core/ok.ts': `import { x } from 'src/core/util';\nexport const ok = x;\n`,
      'src/core/util.ts': `export const x = 1;\n`,
      'src/core/framework.ts': `import { Injectable } from '@nestjs/common';\nexport const f = Injectable;\n`,
      'src/core/outer.ts': `import { b } from 'src/modules/b';\nexport const o = b;\n`,
      'src/core/cycle-one.ts': `import { two } from 'src/core/cycle-two';\nexport const one = () => two;\n`,
      'src/core/cycle-two.ts': `import { one } from 'src/core/cycle-one';\nexport const two = () => one;\n`,
      // A cycle through type-only imports is erased at compile time: allowed.
      'src/core/type-one.ts': `import { type Two } from 'src/core/type-two';\nexport interface One { two?: Two }\nexport const ONE = 1;\n`,
      'src/core/type-two.ts': `import { type One } from 'src/core/type-one';\nexport interface Two { one?: One }\nexport const TWO = 2;\n`,
      'src/modules/a/a.service.ts': [
        `import { b } from 'src/modules/b';`,
        `import { internal } from 'src/modules/b/b.internal';`,
        `import { deep } from 'src/modules/b/sub';`,
        `import { own } from 'src/modules/a/a.helper';`,
        `import { ok } from 'src/core/ok';`,
        `export const a = [b, internal, deep, own, ok];`,
        ``,
      ].join('\n'),
      'src/modules/a/a.helper.ts': `export const own = 1;\n`,
      'src/modules/b/index.ts': `export const b = 1;\n`,
      'src/modules/b/b.internal.ts': `export const internal = 1;\n`,
      'src/modules/b/sub/index.ts': `export const deep = 1;\n`,
      'src/platform/base.ts': `import { b } from 'src/modules/b';\nexport const base = b;\n`,
      'src/modules/a/a.spec.ts': `import { helper } from 'test/helper';\nexport const s = helper;\n`,
      'test/helper.ts': `export const helper = 1;\n`,
    };
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(dirname(join(tree, path)), { recursive: true });
      writeFileSync(join(tree, path), text);
    }
    // Framework packages resolve as they do in the repository.
    symlinkSync(join(root, 'node_modules'), join(tree, 'node_modules'), 'dir');
    planted = cruise(tree);
  }, 20000);

  afterAll(() => rmSync(tree, { recursive: true, force: true }));

  it('rejects a framework import in src/core', () => {
    const found = hits(planted, 'core-no-framework');
    expect(found).toHaveLength(1);
    expect(found[0]).toMatch(/^src\/core\/framework\.ts → .*@nestjs\/common\//);
  });

  it('rejects src/core importing an outer layer', () => {
    expect(hits(planted, 'core-no-outer-layers')).toEqual([
      'src/core/outer.ts → src/modules/b/index.ts',
    ]);
  });

  it('rejects an import cycle', () => {
    // One violation per cycle, reported on one of its edges; the type-only cycle is not one.
    expect(hits(planted, 'no-circular')).toEqual([
      expect.stringMatching(/^src\/core\/cycle-(one|two)\.ts → src\/core\/cycle-(one|two)\.ts$/),
    ]);
  });

  it("lets a module use another module only through that module's index.ts", () => {
    expect(hits(planted, 'module-public-api')).toEqual([
      'src/modules/a/a.service.ts → src/modules/b/b.internal.ts',
      'src/modules/a/a.service.ts → src/modules/b/sub/index.ts',
    ]);
  });

  it('rejects platform importing a module', () => {
    expect(hits(planted, 'platform-not-to-modules')).toEqual([
      'src/platform/base.ts → src/modules/b/index.ts',
    ]);
  });

  it('rejects src importing from test/', () => {
    expect(hits(planted, 'src-not-to-test')).toEqual(['src/modules/a/a.spec.ts → test/helper.ts']);
  });

  it('reports the error-level rules as errors', () => {
    const severities = new Map(planted.violations.map((v) => [v.rule.name, v.rule.severity]));
    for (const rule of [
      'core-no-framework',
      'core-no-outer-layers',
      'no-circular',
      'module-public-api',
      'platform-not-to-modules',
      'src-not-to-test',
    ]) {
      expect(severities.get(rule)).toBe('error');
    }
  });

  it('finds no violation at all in the real src', () => {
    const real = cruise(root);
    expect(real.violations).toEqual([]);
    expect(real.error).toBe(0);
  }, 20000);
});
