import { canonicalJson, fingerprint } from 'src/core/model-archive/fingerprint';
import { compareSemVer, parseSemVer } from 'src/core/model-archive/semver';

describe('fingerprint', () => {
  const parts = {
    config: 'pipeline: []\n',
    domain: 'intents: [greet]\n',
    nlu: '- intent: greet\n',
  };

  it('is stable, independent of key order and line endings', () => {
    const a = fingerprint(parts, '1.4.2');
    expect(a).toMatch(/^[0-9a-f]{64}$/);
    expect(
      fingerprint({ nlu: parts.nlu, domain: parts.domain, config: parts.config }, '1.4.2'),
    ).toBe(a);
    expect(fingerprint({ ...parts, domain: '\uFEFFintents: [greet]\r\n' }, '1.4.2')).toBe(a);
  });

  it('ignores patch releases but not minor ones', () => {
    const a = fingerprint(parts, '1.4.2');
    expect(fingerprint(parts, '1.4.9')).toBe(a);
    expect(fingerprint(parts, '1.5.0')).not.toBe(a);
  });

  it('changes with the data and the part names', () => {
    const a = fingerprint(parts, '1.4.2');
    expect(fingerprint({ ...parts, nlu: '- intent: bye\n' }, '1.4.2')).not.toBe(a);
    expect(
      fingerprint({ config: parts.config, domain: parts.domain, nlu2: parts.nlu }, '1.4.2'),
    ).not.toBe(a);
    expect(fingerprint({ a: 'bc' }, '1.0.0')).not.toBe(fingerprint({ ab: 'c' }, '1.0.0'));
  });

  it('refuses a version that is not SemVer', () => {
    expect(() => fingerprint(parts, 'latest')).toThrow('not a semantic version');
  });

  it('canonicalJson sorts keys recursively', () => {
    expect(canonicalJson({ b: [{ d: 1, c: 2 }], a: undefined, e: null })).toBe(
      '{"b":[{"c":2,"d":1}],"e":null}',
    );
  });
});

describe('semver', () => {
  const cmp = (a: string, b: string) => {
    const x = parseSemVer(a);
    const y = parseSemVer(b);
    if (!x || !y) throw new Error('bad version');
    return compareSemVer(x, y);
  };

  it('parses and rejects', () => {
    expect(parseSemVer('1.2.3-rc.1+build.5')).toEqual({
      major: 1,
      minor: 2,
      patch: 3,
      prerelease: ['rc', '1'],
    });
    for (const bad of ['1.2', '01.2.3', 'v1.2.3', '1.2.3-', '3.6.0rc1', '']) {
      expect(parseSemVer(bad)).toBeNull();
    }
  });

  it('orders by precedence', () => {
    const ordered = [
      '1.0.0-alpha',
      '1.0.0-alpha.1',
      '1.0.0-alpha.beta',
      '1.0.0-beta',
      '1.0.0-beta.2',
      '1.0.0-beta.11',
      '1.0.0-rc.1',
      '1.0.0',
      '1.0.1',
      '1.10.0',
      '2.0.0',
    ];
    for (let i = 0; i + 1 < ordered.length; i++) {
      expect(cmp(ordered[i] ?? '', ordered[i + 1] ?? '')).toBe(-1);
      expect(cmp(ordered[i + 1] ?? '', ordered[i] ?? '')).toBe(1);
    }
    expect(cmp('1.0.0+a', '1.0.0+b')).toBe(0);
  });
});
