import {
  InMemoryReminderStore,
  reminderCancelled,
  reminderScheduled,
  ReminderScheduler,
  type CommittedTurn,
  type DialogueEvent,
  type ReminderRecord,
  type RuntimeLog,
} from 'src/core';

function quietLog(): RuntimeLog & { warnings: string[] } {
  const warnings: string[] = [];
  return {
    warnings,
    info: () => undefined,
    warn: (m) => warnings.push(m),
    error: () => undefined,
  };
}

const AT = '2030-01-01T10:00:00+00:00';

function turn(events: DialogueEvent[], effects = true, conversationId = 'c1'): CommittedTurn {
  return {
    conversationId,
    kind: 'append',
    events,
    firstSeq: 1,
    tracker: null as never,
    output: { name: 'callback' } as never,
    effects,
  };
}

/** The stored reminders, by name. */
function stored(store: InMemoryReminderStore): Promise<ReminderRecord[]> {
  return Promise.resolve(store.list().sort((a, b) => a.name.localeCompare(b.name)));
}

describe(ReminderScheduler.name, () => {
  it('stores the reminders of a committed turn with side effects, with the output channel of the turn', async () => {
    const store = new InMemoryReminderStore();
    const woken: number[] = [];
    const scheduler = new ReminderScheduler(store, quietLog());
    scheduler.onScheduled((at) => woken.push(at));
    await scheduler.onTurnCommitted(
      turn([
        reminderScheduled({
          timestamp: 100,
          intent: 'remind',
          dateTime: AT,
          entities: { place: 'home' },
          name: 'r1',
          killOnUserMessage: false,
        }),
      ]),
    );
    expect(await stored(store)).toEqual([
      {
        conversationId: 'c1',
        name: 'r1',
        intent: 'remind',
        entities: [{ entity: 'place', value: 'home' }],
        triggerAt: Date.parse(AT),
        killOnUserMessage: false,
        scheduledAt: 100,
        outputChannel: 'callback',
      },
    ]);
    expect(woken).toEqual([Date.parse(AT)]);
  });

  it('ignores turns without side effects, reminders without an intent and invalid dates', async () => {
    const store = new InMemoryReminderStore();
    const log = quietLog();
    const scheduler = new ReminderScheduler(store, log);
    await scheduler.onTurnCommitted(
      turn([reminderScheduled({ timestamp: 1, intent: 'x', dateTime: AT, name: 'a' })], false),
    );
    await scheduler.onTurnCommitted(
      turn([
        reminderScheduled({ timestamp: 1, intent: null, dateTime: AT, name: 'b' }),
        reminderScheduled({ timestamp: 1, intent: 'x', dateTime: 'not a date', name: 'c' }),
      ]),
    );
    expect(store.size).toBe(0);
    expect(log.warnings).toEqual(['reminder with an invalid date_time ignored']);
  });

  it('replaces a reminder of the same name in the same conversation only', async () => {
    const store = new InMemoryReminderStore();
    const scheduler = new ReminderScheduler(store, quietLog());
    await scheduler.onTurnCommitted(
      turn([reminderScheduled({ timestamp: 1, intent: 'first', dateTime: AT, name: 'r' })]),
    );
    await scheduler.onTurnCommitted(
      turn(
        [reminderScheduled({ timestamp: 1, intent: 'other', dateTime: AT, name: 'r' })],
        true,
        'c2',
      ),
    );
    await scheduler.onTurnCommitted(
      turn([reminderScheduled({ timestamp: 2, intent: 'second', dateTime: AT, name: 'r' })]),
    );
    const all = await stored(store);
    expect(all.map((r) => [r.conversationId, r.intent])).toEqual(
      expect.arrayContaining([
        ['c1', 'second'],
        ['c2', 'other'],
      ]),
    );
    expect(all).toHaveLength(2);
  });

  it('cancels by name, or by intent and entities (in any key order), in its conversation only', async () => {
    const store = new InMemoryReminderStore();
    const scheduler = new ReminderScheduler(store, quietLog());
    const set = (name: string, intent: string, entities: unknown, conv = 'c1') =>
      scheduler.onTurnCommitted(
        turn(
          [reminderScheduled({ timestamp: 1, intent, dateTime: AT, name, entities })],
          true,
          conv,
        ),
      );
    await set('a', 'ping', null);
    await set('b', 'ping', [{ entity: 'x', value: 1 }]);
    await set('c', 'pong', [{ value: 1, entity: 'x' }]);
    await set('d', 'ping', null, 'c2');
    await set('e', 'other', null);

    await scheduler.onTurnCommitted(turn([reminderCancelled({ timestamp: 1, name: 'e' })]));
    await scheduler.onTurnCommitted(
      turn([reminderCancelled({ timestamp: 1, entities: [{ entity: 'x', value: 1 }] })]),
    );
    expect((await stored(store)).map((r) => r.name)).toEqual(['a', 'd']);
    await scheduler.onTurnCommitted(turn([reminderCancelled({ timestamp: 1, intent: 'ping' })]));
    expect((await stored(store)).map((r) => r.name)).toEqual(['d']);
  });

  it('cancels a reminder set earlier in the same turn', async () => {
    const store = new InMemoryReminderStore();
    const scheduler = new ReminderScheduler(store, quietLog());
    await scheduler.onTurnCommitted(
      turn([
        reminderScheduled({ timestamp: 1, intent: 'x', dateTime: AT, name: 'gone' }),
        reminderCancelled({ timestamp: 1, name: 'gone' }),
      ]),
    );
    expect(store.size).toBe(0);
  });
});
