import {
  type DialogueEvent,
  InMemoryReminderStore,
  reminderCancelled,
  reminderChanges,
  type ReminderRecord,
  reminderScheduled,
  setsKillableReminder,
  userUttered,
} from 'src/core';

const AT = '2030-01-01T10:00:00+00:00';
const TURN = { conversationId: 'c1', outputChannel: 'callback' };

const set = (
  name: string,
  timestamp: number,
  extra: { intent?: string; entities?: unknown; kill?: boolean } = {},
): DialogueEvent =>
  reminderScheduled({
    timestamp,
    intent: extra.intent ?? 'ping',
    dateTime: AT,
    name,
    entities: extra.entities ?? null,
    killOnUserMessage: extra.kill ?? false,
  });
const user = (timestamp: number): DialogueEvent =>
  userUttered({ timestamp, text: 'hi', intent: { name: 'greet' } });

describe('reminderChanges', () => {
  it('stores a reminder with its entities as a list and the output channel of the turn', () => {
    const changes = reminderChanges(
      [set('r1', 100, { intent: 'remind', entities: { place: 'home' }, kill: true })],
      TURN,
    );
    expect(changes).toEqual({
      schedule: [
        {
          conversationId: 'c1',
          name: 'r1',
          intent: 'remind',
          entities: [{ entity: 'place', value: 'home' }],
          triggerAt: Date.parse(AT),
          killOnUserMessage: true,
          scheduledAt: 100,
          outputChannel: 'callback',
        },
      ],
      cancel: [],
      killedBefore: null,
      ignored: [],
    });
  });

  it('sets nothing for a reminder without an intent or with an invalid date, and names it', () => {
    const noIntent = reminderScheduled({ timestamp: 1, intent: null, dateTime: AT, name: 'a' });
    const noDate = reminderScheduled({ timestamp: 1, intent: 'x', dateTime: 'never', name: 'b' });
    const changes = reminderChanges([noIntent, noDate], TURN);
    expect(changes.schedule).toEqual([]);
    expect(changes.ignored).toEqual([noIntent, noDate]);
  });

  it('keeps the last reminder set under a name', () => {
    const changes = reminderChanges(
      [set('r', 1, { intent: 'a' }), set('r', 2, { intent: 'b' })],
      TURN,
    );
    expect(changes.schedule.map((r) => [r.name, r.intent])).toEqual([['r', 'b']]);
  });

  it('cancels by name, and by intent and entities; a reminder set and cancelled in the turn is deleted by name', () => {
    const changes = reminderChanges(
      [
        set('a', 1, { intent: 'ping', entities: [{ entity: 'x', value: 1 }] }),
        set('b', 1, { intent: 'pong' }),
        reminderCancelled({ timestamp: 2, name: 'gone' }),
        reminderCancelled({ timestamp: 2, intent: 'ping', entities: [{ value: 1, entity: 'x' }] }),
      ],
      TURN,
    );
    expect(changes.schedule.map((r) => r.name)).toEqual(['b']);
    expect(changes.cancel).toEqual([
      { name: 'gone' },
      { name: null, intent: 'ping', entities: [{ value: 1, entity: 'x' }] },
      { name: 'a' },
    ]);
  });

  it('a user message kills the kill_on_user_msg reminders set before it, stored ones included', () => {
    const changes = reminderChanges(
      [
        set('before', 1, { kill: true }),
        set('kept', 1, { kill: false }),
        user(2),
        set('after', 3, { kill: true }),
        user(1.5), // an older time than the first: the latest one counts
      ],
      TURN,
    );
    expect(changes.killedBefore).toBe(2);
    expect(changes.schedule.map((r) => r.name)).toEqual(['kept', 'after']);
    expect(changes.cancel).toEqual([{ name: 'before' }]);
  });

  it('deletes no stored reminder for a user message when none read can wait on one; kills its own', () => {
    const events = [set('before', 1, { kill: true }), user(2)];
    const changes = reminderChanges(events, { ...TURN, storedKillable: false });
    expect(changes.killedBefore).toBeNull();
    expect(changes.schedule).toEqual([]);
    expect(changes.cancel).toEqual([{ name: 'before' }]);
    expect(setsKillableReminder([set('a', 1, { kill: false }), user(2)])).toBe(false);
    expect(setsKillableReminder([user(1), set('a', 2, { kill: true })])).toBe(true);
  });

  it('changes nothing for a turn without reminder events or user messages', () => {
    const changes = reminderChanges([], TURN);
    expect(changes).toEqual({ schedule: [], cancel: [], killedBefore: null, ignored: [] });
  });

  /**
   * The changes applied at once leave the store as applying every event in order does — the
   * store's `schedule` and `cancel`, and each user message deleting the kill_on_user_msg
   * reminders set before it — whatever was stored before, over many generated turns.
   */
  it('applied at once, leave the store as the events applied one by one', async () => {
    let seed = 42; // mulberry32: a fixed, well-mixed sequence
    const random = (n: number): number => {
      seed = (seed + 0x6d2b79f5) | 0;
      let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return ((((t ^ (t >>> 14)) >>> 0) / 4294967296) * n) | 0;
    };
    const names = ['a', 'b', 'c'];
    const intents = ['ping', 'pong'];
    const entities = [null, [{ entity: 'x', value: 1 }]];
    const event = (t: number): DialogueEvent => {
      const kind = random(4);
      if (kind === 0) return user(t);
      if (kind === 1) {
        const by = random(3);
        return by === 0
          ? reminderCancelled({ timestamp: t, name: names[random(3)] })
          : reminderCancelled({
              timestamp: t,
              intent: by === 1 ? intents[random(2)] : null,
              entities: entities[random(2)],
            });
      }
      return set(names[random(3)] as string, t, {
        intent: intents[random(2)] as string,
        entities: entities[random(2)],
        kill: random(2) === 0,
      });
    };
    const sorted = (store: InMemoryReminderStore): ReminderRecord[] =>
      store.list().sort((x, y) => x.name.localeCompare(y.name));
    for (let round = 0; round < 300; round++) {
      const stored = Array.from({ length: random(4) }, (_, i) => event(i));
      const turn = Array.from({ length: 1 + random(6) }, (_, i) => event(10 + i));
      const oneByOne = new InMemoryReminderStore();
      const atOnce = new InMemoryReminderStore();
      for (const e of [...stored, ...turn]) {
        if (e.type === 'reminder') {
          const [r] = reminderChanges([e], TURN).schedule;
          if (r) await oneByOne.schedule(r);
        } else if (e.type === 'cancel_reminder') {
          for (const m of reminderChanges([e], TURN).cancel) await oneByOne.cancel('c1', m);
        } else {
          for (const r of oneByOne.list()) {
            if (r.killOnUserMessage && r.scheduledAt < e.timestamp) {
              await oneByOne.cancel('c1', { name: r.name });
            }
          }
        }
      }
      atOnce.apply('c1', reminderChanges(stored, TURN));
      atOnce.apply('c1', reminderChanges(turn, TURN));
      expect(sorted(atOnce)).toEqual(sorted(oneByOne));
    }
  });
});
