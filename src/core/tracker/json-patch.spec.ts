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

  it.each([
    [[{ op: 'remove', path: '/5' }]],
    [[{ op: 'test', path: '/0', value: 1 }]],
    [[{ op: 'jump', path: '/0' }]],
    [{ op: 'add' }],
  ])('rejects %j', (patch) => {
    expect(() => applyJsonPatch([0], patch)).toThrow(/Invalid stack update/);
  });
});
