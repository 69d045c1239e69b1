import {
  bm25Rank,
  cosine,
  DEFAULT_FLOW_RETRIEVAL,
  flowDocument,
  FlowRetrieval,
  retrievalQuery,
  tokenize,
} from 'src/core/flows/llm/flow-retrieval';
import { BANK_SLOTS, bankFlows, bankTracker, testFlow } from 'src/core/flows/llm/llm-fixtures';

const flows = bankFlows();

describe('flowDocument', () => {
  it('holds the name, description and collected slots with descriptions and values', () => {
    const transfer = flows.flow('transfer_money');
    expect(transfer && flowDocument(transfer, flows, BANK_SLOTS)).toBe(
      'transfer money: Send money to a friend or family member.\n' +
        'recipient: who receives the money\namount: how much to send\nconfirm',
    );
    const balance = flows.flow('check_balance');
    expect(balance && flowDocument(balance, flows, BANK_SLOTS)).toContain(
      'account_type (checking, savings, __other__)',
    );
    expect(balance && flowDocument(balance, flows, BANK_SLOTS, false)).toBe(
      'check balance: Show the balance of a bank account.',
    );
  });
});

describe('bm25Rank', () => {
  it('ranks the document sharing the rarer query words first', () => {
    expect(tokenize('Check_balance, of my ACCOUNT')).toEqual([
      'check',
      'balance',
      'of',
      'my',
      'account',
    ]);
    const ranked = bm25Rank(
      [
        { id: 'a', text: 'send money to a friend' },
        { id: 'b', text: 'show the balance of an account' },
        { id: 'c', text: 'order a new card' },
      ],
      'what is my account balance',
    );
    expect(ranked[0]?.[0]).toBe('b');
    expect(ranked[0]?.[1]).toBeGreaterThan(0);
    expect(ranked.slice(1).map(([, s]) => s)).toEqual([0, 0]);
    expect(bm25Rank([], 'x')).toEqual([]);
  });
});

describe('cosine', () => {
  it('is 1 for parallel vectors, 0 for orthogonal or empty ones', () => {
    expect(cosine([1, 2], [2, 4])).toBeCloseTo(1);
    expect(cosine([1, 0], [0, 1])).toBe(0);
    expect(cosine([], [1])).toBe(0);
  });
});

describe('retrievalQuery', () => {
  it('joins the last turns_to_embed user turns, the new message last', () => {
    const tracker = bankTracker([
      ['user', 'one'],
      ['bot', 'ok'],
      ['user', 'two'],
    ]);
    expect(retrievalQuery(tracker, 'three', 1)).toBe('three');
    expect(retrievalQuery(tracker, 'three', 2)).toBe('two\nthree');
    expect(retrievalQuery(tracker, 'three', 9)).toBe('one\ntwo\nthree');
  });
});

describe('FlowRetrieval (offline)', () => {
  it('ranks user flows for the message, best first, keeps num_flows, skips link-only flows', async () => {
    const retrieval = new FlowRetrieval({ ...DEFAULT_FLOW_RETRIEVAL, numFlows: 2 }, () => {
      throw new Error('no network in offline retrieval');
    });
    const candidates = [
      ...flows.userFlows,
      testFlow('linked_only', 'balance balance balance', [], { guard: 'false' }),
    ];
    const ranked = await retrieval.rank(candidates, flows, bankTracker(), 'I lost my card');
    expect(ranked).toHaveLength(2);
    expect(ranked[0]?.[0]).toBe('replace_card');
    expect(ranked.map(([id]) => id)).not.toContain('linked_only');
  });
});
