import { DEFAULT_SERVER_NODE_FLAGS, launchPlan, NODE_FLAGS_APPLIED_ENV } from './node-flags';

describe('launchPlan', () => {
  it('starts `parley run` again with the default flags', () => {
    expect(launchPlan(['run', '--enable-api'], {}, [])).toEqual({
      kind: 'relaunch',
      flags: DEFAULT_SERVER_NODE_FLAGS,
    });
  });

  it('leaves other commands and help alone', () => {
    expect(launchPlan(['train', '--data', 'd'], {}, [])).toEqual({ kind: 'here' });
    expect(launchPlan(['run', '--help'], {}, [])).toEqual({ kind: 'here' });
    expect(launchPlan([], {}, [])).toEqual({ kind: 'here' });
  });

  it('never starts a third process', () => {
    expect(launchPlan(['run'], { [NODE_FLAGS_APPLIED_ENV]: '1' }, [])).toEqual({ kind: 'here' });
  });

  it('keeps flags that are already set, by node or NODE_OPTIONS, whatever their value', () => {
    expect(launchPlan(['run'], {}, ['--max-semi-space-size=64'])).toEqual({ kind: 'here' });
    expect(launchPlan(['run'], { NODE_OPTIONS: '--max_semi_space_size=8' }, [])).toEqual({
      kind: 'here',
    });
  });

  it('adds only the configured flags that are missing', () => {
    expect(
      launchPlan(
        ['run'],
        { PARLEY_NODE_FLAGS: '--max-semi-space-size=48  --max-old-space-size=4096' },
        ['--max-old-space-size=2048', '--cpu-prof'],
      ),
    ).toEqual({ kind: 'relaunch', flags: ['--max-semi-space-size=48'] });
  });

  it('takes an empty PARLEY_NODE_FLAGS as unset, as every setting', () => {
    expect(launchPlan(['run'], { PARLEY_NODE_FLAGS: ' ' }, [])).toEqual({
      kind: 'relaunch',
      flags: DEFAULT_SERVER_NODE_FLAGS,
    });
  });

  it('runs in place with PARLEY_NODE_FLAGS=none or under a debugger', () => {
    expect(launchPlan(['run'], { PARLEY_NODE_FLAGS: 'none' }, [])).toEqual({ kind: 'here' });
    expect(launchPlan(['run'], {}, ['--inspect=9229'])).toEqual({ kind: 'here' });
    expect(launchPlan(['run'], { NODE_OPTIONS: '--inspect-brk' }, [])).toEqual({ kind: 'here' });
  });

  it('names a value that is not a Node flag', () => {
    expect(launchPlan(['run'], { PARLEY_NODE_FLAGS: 'max-semi-space-size=32' }, [])).toEqual({
      kind: 'invalid',
      message:
        "PARLEY_NODE_FLAGS: 'max-semi-space-size=32' is not a Node flag (expected --name or --name=value)",
    });
  });
});
