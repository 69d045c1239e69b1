import {
  type CommittedTurn,
  type DialogueEvent,
  reminderCancelled,
  reminderChanges,
  reminderScheduled,
  ReminderScheduler,
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

/** A committed turn as the runtime hands it over: with its reminder changes when it has effects. */
function turn(events: DialogueEvent[], effects = true): CommittedTurn {
  return {
    conversationId: 'c1',
    kind: 'append',
    events,
    firstSeq: 1,
    tracker: null as never,
    output: { name: 'callback' } as never,
    effects,
    ...(effects
      ? { reminders: reminderChanges(events, { conversationId: 'c1', outputChannel: 'callback' }) }
      : {}),
  };
}

describe(ReminderScheduler.name, () => {
  it('wakes the poller at the time of each reminder the committed turn set', () => {
    const woken: number[] = [];
    const scheduler = new ReminderScheduler(quietLog());
    scheduler.onScheduled((at) => woken.push(at));
    scheduler.onTurnCommitted(
      turn([
        reminderScheduled({ timestamp: 1, intent: 'a', dateTime: AT, name: 'a' }),
        reminderScheduled({
          timestamp: 1,
          intent: 'b',
          dateTime: '2031-01-01T00:00:00Z',
          name: 'b',
        }),
        reminderScheduled({ timestamp: 1, intent: 'c', dateTime: AT, name: 'c' }),
        reminderCancelled({ timestamp: 1, name: 'c' }),
      ]),
    );
    expect(woken).toEqual([Date.parse(AT), Date.parse('2031-01-01T00:00:00Z')]);
  });

  it('does nothing for turns without side effects; warns of reminders with an invalid date', () => {
    const woken: number[] = [];
    const log = quietLog();
    const scheduler = new ReminderScheduler(log);
    scheduler.onScheduled((at) => woken.push(at));
    scheduler.onTurnCommitted(
      turn([reminderScheduled({ timestamp: 1, intent: 'x', dateTime: AT, name: 'a' })], false),
    );
    scheduler.onTurnCommitted(
      turn([
        reminderScheduled({ timestamp: 1, intent: null, dateTime: AT, name: 'b' }),
        reminderScheduled({ timestamp: 1, intent: 'x', dateTime: 'not a date', name: 'c' }),
      ]),
    );
    expect(woken).toEqual([]);
    expect(log.warnings).toEqual(['reminder with an invalid date_time ignored']);
  });
});
