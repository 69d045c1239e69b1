import { AppendBatcher, type PendingAppend } from './batched-append';

const rows = {
  types: ['pause'],
  timestamps: [1],
  intents: [null],
  actions: [null],
  data: ['{}'],
  lastSessionStartIndex: -1,
  assistantId: null,
};

describe(AppendBatcher.name, () => {
  it('sends a lone write at once and batches the writes that arrive meanwhile', async () => {
    const batches: string[][] = [];
    let release: () => void = () => undefined;
    const batcher = new AppendBatcher(async (batch: PendingAppend[]) => {
      batches.push(batch.map((p) => p.conversationId));
      if (batches.length === 1) await new Promise<void>((r) => (release = r));
      for (const p of batch) p.resolve({ generation: 'g', lastSeq: 1 });
    }, 1);
    const first = batcher.submit({ conversationId: 'a', rows, expected: null, traceparent: null });
    const rest = ['b', 'c', 'd'].map((id) =>
      batcher.submit({ conversationId: id, rows, expected: null, traceparent: null }),
    );
    expect(batches).toEqual([['a']]);
    release();
    await Promise.all([first, ...rest]);
    expect(batches).toEqual([['a'], ['b', 'c', 'd']]);
  });

  it('never puts two writes of one conversation in the same batch, and keeps their order', async () => {
    const batches: string[][] = [];
    const batcher = new AppendBatcher(async (batch: PendingAppend[]) => {
      batches.push(batch.map((p) => `${p.conversationId}${p.rows.timestamps[0]}`));
      await Promise.resolve();
      for (const p of batch) p.resolve(null);
    }, 1);
    await Promise.all([
      batcher.submit({
        conversationId: 'x',
        rows: { ...rows, timestamps: [1] },
        expected: null,
        traceparent: null,
      }),
      batcher.submit({
        conversationId: 'x',
        rows: { ...rows, timestamps: [2] },
        expected: null,
        traceparent: null,
      }),
      batcher.submit({
        conversationId: 'y',
        rows: { ...rows, timestamps: [3] },
        expected: null,
        traceparent: null,
      }),
      batcher.submit({
        conversationId: 'x',
        rows: { ...rows, timestamps: [4] },
        expected: null,
        traceparent: null,
      }),
    ]);
    expect(batches).toEqual([['x1'], ['x2', 'y3'], ['x4']]);
  });

  it('rejects every write of a batch whose execution fails', async () => {
    const batcher = new AppendBatcher(() => Promise.reject(new Error('db down')), 1);
    await expect(
      batcher.submit({ conversationId: 'a', rows, expected: null, traceparent: null }),
    ).rejects.toThrow('db down');
  });
});
