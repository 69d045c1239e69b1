import { trainingTrackers, type TrainingTracker } from 'src/core/dialogue/story-graph';
import { Domain } from 'src/core/domain/domain';
import { MemoizationPolicy } from 'src/core/policies/memoization-policy';
import { readStoryFiles, trainDialogue } from 'src/core/processor/train-dialogue';

const domain = Domain.fromObject({
  intents: ['greet', 'order', 'pay', 'bye'],
  entities: ['kind'],
  slots: {
    kind: {
      type: 'categorical',
      values: ['pizza', 'pasta'],
      mappings: [{ type: 'from_entity', entity: 'kind' }],
    },
  },
  responses: {
    utter_greet: [{ text: 'hi' }],
    utter_pizza: [{ text: 'pizza!' }],
    utter_pasta: [{ text: 'pasta!' }],
    utter_bye: [{ text: 'bye' }],
  },
});

const STORIES = `
stories:
- story: order
  steps:
  - intent: order
    entities:
    - kind: pizza
  - checkpoint: ordered
- story: order pasta
  steps:
  - intent: order
    entities:
    - kind: pasta
  - checkpoint: ordered
- story: pizza
  steps:
  - checkpoint: ordered
    slot_was_set:
    - kind: pizza
  - action: utter_pizza
- story: pasta
  steps:
  - checkpoint: ordered
    slot_was_set:
    - kind: pasta
  - action: utter_pasta
- story: greet
  steps:
  - intent: greet
  - action: utter_greet
- story: bye
  steps:
  - intent: bye
  - action: utter_bye
`;

const read = (text: string) => readStoryFiles([{ text, file: 'stories.yml' }]);

/** `intent`/action names of a tracker, in order. */
const path = (t: TrainingTracker): string[] =>
  t.events.flatMap((e) =>
    e.type === 'user'
      ? [`${String(e.intent.name)}${e.entities.length ? `(${String(e.entities[0]?.value)})` : ''}`]
      : e.type === 'action'
        ? [e.name ?? '']
        : [],
  );

describe('story graph: checkpoint conditions', () => {
  it('reads `slot_was_set` under a checkpoint and joins only the stories whose conditions hold', () => {
    const { blocks, warnings } = read(STORIES);
    expect(warnings).toEqual([]);
    const start = blocks.find((b) => b.name === 'pizza')?.steps[0];
    expect(start).toEqual({ kind: 'checkpoint', name: 'ordered', conditions: { kind: 'pizza' } });
    const paths = trainingTrackers(blocks, domain).map(path);
    expect(paths).toContainEqual(['action_listen', 'order(pizza)', 'utter_pizza', 'action_listen']);
    expect(paths).toContainEqual(['action_listen', 'order(pasta)', 'utter_pasta', 'action_listen']);
    expect(paths).not.toContainEqual([
      'action_listen',
      'order(pizza)',
      'utter_pasta',
      'action_listen',
    ]);
    expect(paths).not.toContainEqual([
      'action_listen',
      'order(pasta)',
      'utter_pizza',
      'action_listen',
    ]);
  });

  it('warns about (and ignores) conditions on end checkpoints', () => {
    const { warnings } = read(`
stories:
- story: s
  steps:
  - intent: greet
  - checkpoint: later
    slot_was_set:
    - kind: pizza
`);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('end or intermediate checkpoints do not support conditions');
  });
});

describe('story graph: augmentation', () => {
  const { blocks } = read(STORIES);

  it('glues stories to the ends of others, marked augmented, and is reproducible', () => {
    const plain = trainingTrackers(blocks, domain);
    const a = trainingTrackers(blocks, domain, { augmentationFactor: 5 });
    const b = trainingTrackers(blocks, domain, { augmentationFactor: 5 });
    expect(a.map(path)).toEqual(b.map(path));
    expect(a.slice(0, plain.length).map(path)).toEqual(plain.map(path));
    const augmented = a.slice(plain.length);
    expect(augmented.length).toBeGreaterThan(0);
    expect(augmented.length).toBeLessThanOrEqual(50);
    expect(augmented.every((t) => t.isAugmented === true)).toBe(true);
    expect(plain.every((t) => !t.isAugmented)).toBe(true);
    // A glued story follows the previous story's last action with its own listen, once.
    for (const t of augmented) {
      const p = path(t);
      expect(p.filter((x) => x === 'action_listen').length).toBe(
        p.filter((x) => !x.startsWith('utter_') && x !== 'action_listen').length + 1,
      );
      expect(p.join(' ')).not.toContain('action_listen action_listen');
    }
    // Checkpoint conditions hold in glued stories too.
    for (const t of augmented) {
      expect(path(t).join(' ')).not.toMatch(
        /order\(pizza\) utter_pasta|order\(pasta\) utter_pizza/,
      );
    }
    const another = trainingTrackers(blocks, domain, { augmentationFactor: 5, seed: 7 });
    expect(another.map(path)).not.toEqual(a.map(path));
  });

  it('memoization learns the stories as written only (augmented trackers are for TED)', () => {
    const { trackers } = trainDialogue(blocks, domain, [{ name: 'MemoizationPolicy' }]);
    expect(trackers.some((t) => t.isAugmented)).toBe(true);
    const withAugmented = MemoizationPolicy.train({ trackers, domain }).toJSON();
    const original = MemoizationPolicy.train({
      trackers: trackers.filter((t) => !t.isAugmented),
      domain,
    }).toJSON();
    expect(withAugmented).toEqual(original);
    const none = trainDialogue(blocks, domain, [{ name: 'MemoizationPolicy' }], {
      augmentationFactor: 0,
    });
    expect(none.trackers.some((t) => t.isAugmented)).toBe(false);
  });
});
