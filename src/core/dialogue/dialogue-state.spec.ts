import { activeState, slotFeatures, statesForEvents } from 'src/core/dialogue/dialogue-state';
import { Domain } from 'src/core/domain/domain';
import { actionExecuted } from 'src/core/events/action-executed';
import { slotSet } from 'src/core/events/slot-set';
import { userUttered } from 'src/core/events/user-uttered';
import { DialogueStateTracker } from 'src/core/tracker/dialogue-state-tracker';

const domain = Domain.fromObject({
  intents: ['greet', { inform: { use_entities: ['city'] } }],
  entities: ['city', 'date'],
  slots: {
    city: { type: 'text', mappings: [] },
    size: { type: 'categorical', values: ['S', 'M'], mappings: [] },
    vip: { type: 'bool', mappings: [] },
    temp: { type: 'float', min_value: 0, max_value: 10, mappings: [] },
    note: { type: 'text', influence_conversation: false, mappings: [] },
  },
});

describe('dialogue states', () => {
  it('featurises slots as Rasa does', () => {
    const slot = (name: string) => domain.slot(name) as NonNullable<ReturnType<Domain['slot']>>;
    expect(slotFeatures(slot('city'), 'x')).toEqual([1]);
    expect(slotFeatures(slot('city'), null)).toEqual([0]);
    expect(slotFeatures(slot('size'), 'm')).toEqual([0, 1, 0]);
    expect(slotFeatures(slot('size'), 'XL')).toEqual([0, 0, 1]);
    expect(slotFeatures(slot('vip'), false)).toEqual([1, 0]);
    expect(slotFeatures(slot('temp'), 25)).toEqual([1]);
    expect(slotFeatures(slot('note'), 'x')).toEqual([]);
  });

  it('builds one state per executed action plus the current one, entities filtered by intent', () => {
    const events = [
      actionExecuted({ name: 'action_listen', timestamp: 1 }),
      userUttered({
        text: 'to Rome tomorrow',
        intent: { name: 'inform' },
        entities: [
          { entity: 'city', value: 'Rome' },
          { entity: 'date', value: 'tomorrow' },
        ],
        timestamp: 2,
      }),
      slotSet({ name: 'city', value: 'Rome', timestamp: 3 }),
      slotSet({ name: 'note', value: 'x', timestamp: 3 }),
    ];
    expect(statesForEvents('s', events, domain)).toEqual([
      {},
      {
        user: { intent: 'inform', entities: ['city'] },
        prev_action: { action_name: 'action_listen' },
        slots: { city: [1] },
      },
    ]);
    const tracker = DialogueStateTracker.fromEvents('s', events, domain);
    expect(activeState(tracker, domain).slots).toEqual({ city: [1] });
    expect(statesForEvents('s', events, domain, 1)).toHaveLength(1);
  });
});
