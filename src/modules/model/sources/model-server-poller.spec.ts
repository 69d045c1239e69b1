import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readModelServerEndpoint } from './endpoints-models';
import { MAX_BACKOFF_SECONDS, nextPullDelaySeconds } from './model-server-poller';
import { persistKey, retrieveKeys } from './model-store.service';

describe('nextPullDelaySeconds (exponential backoff)', () => {
  it('waits the interval after a success and doubles per consecutive failure', () => {
    expect([0, 1, 2, 3].map((n) => nextPullDelaySeconds(100, n))).toEqual([100, 200, 400, 800]);
  });

  it('caps at 8 intervals or an hour, never below the interval', () => {
    expect(nextPullDelaySeconds(10, 10)).toBe(80);
    expect(nextPullDelaySeconds(1000, 10)).toBe(MAX_BACKOFF_SECONDS);
    expect(nextPullDelaySeconds(7200, 3)).toBe(7200);
  });
});

describe('readModelServerEndpoint', () => {
  const dir = mkdtempSync(join(tmpdir(), 'parley-endpoints-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const file = (text: string): string => {
    const path = join(dir, `${Math.random().toString(36).slice(2)}.yml`);
    writeFileSync(path, text);
    return path;
  };

  it('defaults wait_time_between_pulls to 100 s; keeps an explicit null (pull once)', () => {
    expect(readModelServerEndpoint(file('models:\n  url: http://m/x\n'))).toMatchObject({
      url: 'http://m/x',
      tokenName: 'token',
      waitTimeBetweenPulls: 100,
    });
    expect(
      readModelServerEndpoint(file('models:\n  url: http://m/x\n  wait_time_between_pulls: null\n'))
        ?.waitTimeBetweenPulls,
    ).toBeNull();
  });

  it('is null without models:, and names the file on a bad entry or an unset variable', () => {
    expect(readModelServerEndpoint(file('action_endpoint:\n  url: http://a\n'))).toBeNull();
    const bad = file('models:\n  url: ftp://m/x\n');
    expect(() => readModelServerEndpoint(bad)).toThrow(`${bad}: models:`);
    const unset = file('models:\n  url: http://m/x\n  token: ${PARLEY_SURELY_UNSET_VAR}\n');
    expect(() => readModelServerEndpoint(unset)).toThrow(/PARLEY_SURELY_UNSET_VAR is not set/);
  });
});

describe('remote storage keys', () => {
  it('uploads to <out | REMOTE_STORAGE_PATH | models>/<name>', () => {
    expect(persistKey('/x/m.tar.gz', null, null)).toBe('models/m.tar.gz');
    expect(persistKey('/x/m.tar.gz', 'team/a/', null)).toBe('team/a/m.tar.gz');
    expect(persistKey('/x/m.tar.gz', null, 'legacy')).toBe('legacy/m.tar.gz');
    expect(persistKey('/x/m.tar.gz', '/', 'legacy')).toBe('m.tar.gz');
  });

  it('retrieves the name as given, then from models/; REMOTE_STORAGE_PATH takes the basename', () => {
    expect(retrieveKeys('m', null)).toEqual(['m.tar.gz', 'models/m.tar.gz']);
    expect(retrieveKeys('team/m.tar.gz', null)).toEqual(['team/m.tar.gz']);
    expect(retrieveKeys('a/b/m', 'legacy')).toEqual(['legacy/m.tar.gz']);
  });
});
