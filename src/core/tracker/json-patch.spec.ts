import { applyJsonPatch } from 'src/core/tracker/json-patch';

describe('applyJsonPatch', () => {
  it('adds, replaces, removes, moves, copies and tests without touching the input', () => {
    const doc = [{ id: 'a' }, { id: 'b' }];
    const result = applyJsonPatch(doc, [
      { op: 'add', path: '/-', value: { id: 'c' } },
      { op: 'replace', path: '/0/id', value: 'A' },
      { op: 'move', from: '/2', path: '/0' },
      { op: 'copy', from: '/1', path: '/3' },
      { op: 'remove', path: '/2' },
      { op: 'test', path: '/0/id', value: 'c' },
    ]);
    expect(result).toEqual([{ id: 'c' }, { id: 'A' }, { id: 'A' }]);
    expect(doc).toEqual([{ id: 'a' }, { id: 'b' }]);
  });

  it('replaces a member in place, so a frame keeps the key order Rasa serialises', () => {
    const frame = { frame_id: 'K3Q9ZP1A', flow_id: 'f', step_id: 'START', type: 'flow' };
    const result = applyJsonPatch([frame], [{ op: 'replace', path: '/0/step_id', value: 'x' }]);
    expect(JSON.stringify(result)).toBe(
      '[{"frame_id":"K3Q9ZP1A","flow_id":"f","step_id":"x","type":"flow"}]',
    );
    expect(() => applyJsonPatch([frame], [{ op: 'replace', path: '/0/nope', value: 1 }])).toThrow(
      /no member 'nope'/,
    );
  });

  it.each([
    [[{ op: 'remove', path: '/5' }]],
    [[{ op: 'test', path: '/0', value: 1 }]],
    [[{ op: 'jump', path: '/0' }]],
    [{ op: 'add' }],
  ])('rejects %j', (patch) => {
    expect(() => applyJsonPatch([0], patch)).toThrow(/Invalid stack update/);
  });
});
