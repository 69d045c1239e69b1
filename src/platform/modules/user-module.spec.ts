import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findUserModule, requireUserModule } from 'src/platform/modules/user-module';

describe('user modules (custom persistors and channels)', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'parley-user-module-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('finds a module by base name, JavaScript before TypeScript', () => {
    writeFileSync(join(dir, 'a.ts'), 'export const x = 1;');
    expect(findUserModule(join(dir, 'a'))).toBe(join(dir, 'a.ts'));
    writeFileSync(join(dir, 'a.js'), 'exports.x = 2;');
    expect(findUserModule(join(dir, 'a'))).toBe(join(dir, 'a.js'));
    expect(findUserModule(join(dir, 'nothing'))).toBeNull();
  });

  it('loads a TypeScript class with typed members and a relative import', () => {
    writeFileSync(join(dir, 'helper.ts'), 'export const prefix: string = "models/";');
    writeFileSync(
      join(dir, 'store.ts'),
      [
        "import { prefix } from './helper';",
        'export class Store {',
        '  constructor(private readonly bucket: string) {}',
        '  key(name: string): string { return `${this.bucket}:${prefix}${name}`; }',
        '}',
      ].join('\n'),
    );
    const Store = requireUserModule(join(dir, 'store.ts')).Store as new (b: string) => {
      key(n: string): string;
    };
    expect(new Store('b1').key('m.tar.gz')).toBe('b1:models/m.tar.gz');
  });

  it('reports a syntax error of a TypeScript module as a load error', () => {
    writeFileSync(join(dir, 'bad.ts'), 'export class {');
    expect(() => requireUserModule(join(dir, 'bad.ts'))).toThrow(/bad\.ts:1: /);
  });
});
