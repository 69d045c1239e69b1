import { randomUUID } from 'node:crypto';
import {
  encodeWireEvent,
  NO_REMINDER_CHANGES,
  type ReminderChanges,
  type ReminderRecord,
  type SerializedEvent,
  type StoreVersion,
  type TrackerStore,
} from 'src/core';

/** A store under test and how to let go of it (close its connections). */
export interface TrackerStoreFixture {
  readonly store: TrackerStore;
  /** The reminders stored for a conversation (those `appendIfUnchanged` wrote), by name. */
  reminders(conversationId: string): Promise<ReminderRecord[]>;
  dispose(): Promise<void>;
}

/** Creates a fresh store for one test. Stores may share a database: ids are always unique. */
export type TrackerStoreFactory = () => Promise<TrackerStoreFixture>;

const ev = (event: string, timestamp: number, extra: Record<string, unknown> = {}) =>
  ({ event, timestamp, ...extra }) as SerializedEvent;
const sessionStart = (t: number) => ev('action', t, { name: 'action_session_start' });
/** Events encoded as the message loop hands them to appendIfUnchanged. */
const enc = (...events: SerializedEvent[]) => events.map(encodeWireEvent);
const stamps = (events: readonly SerializedEvent[] | null | undefined) =>
  events?.map((e) => e.timestamp);
const AT = Date.parse('2030-01-01T10:00:00Z');
const reminder = (
  conversationId: string,
  name: string,
  extra: Partial<ReminderRecord> = {},
): ReminderRecord => ({
  conversationId,
  name,
  intent: 'ping',
  entities: [],
  triggerAt: AT,
  killOnUserMessage: false,
  scheduledAt: 1,
  outputChannel: 'callback',
  ...extra,
});
const changes = (c: Partial<ReminderChanges>): ReminderChanges => ({
  ...NO_REMINDER_CHANGES,
  ...c,
});

/**
 * The TrackerStore port's contract (src/core/ports/tracker-store.ts), run against every
 * implementation: `describeTrackerStoreContract('InMemoryTrackerStore', factory)` in one spec
 * file per implementation.
 */
export function describeTrackerStoreContract(name: string, factory: TrackerStoreFactory): void {
  describe(`TrackerStore contract: ${name}`, () => {
    let fixture: TrackerStoreFixture;
    let store: TrackerStore;
    const id = (label = 'c') => `${label}-${randomUUID()}`;

    beforeEach(async () => {
      fixture = await factory();
      store = fixture.store;
    });
    afterEach(() => fixture.dispose());

    describe('an unknown conversation', () => {
      it('reads as null everywhere and cannot be deleted', async () => {
        const c = id();
        expect(await store.retrieve(c)).toBeNull();
        expect(await store.retrieve(c, { latestSessionOnly: true })).toBeNull();
        expect(await store.retrieveVersioned(c)).toBeNull();
        expect(await store.retrieveVersioned(c, { latestSessionOnly: true })).toBeNull();
        expect(await store.version(c)).toBeNull();
        expect(await store.exists(c)).toBe(false);
        expect(await store.delete(c)).toBe(false);
      });

      it('is not created by appending no events', async () => {
        const c = id();
        await store.append(c, []);
        expect(await store.retrieve(c)).toBeNull();
        expect(await store.exists(c)).toBe(false);
        expect(await store.version(c)).toBeNull();
      });
    });

    describe('append and retrieve', () => {
      it('keeps events verbatim and in append order, key order included', async () => {
        const c = id();
        const first = {
          event: 'action',
          timestamp: 1,
          metadata: { model_id: 'm' },
          name: 'action_listen',
          policy: null,
          confidence: null,
          action_text: null,
          hide_rule_turn: false,
        };
        const slot = ev('slot', 2, { name: 'a', value: { z: 1, a: [1, 'x', null, true, 2.5] } });
        await store.append(c, [first]);
        await store.append(c, [slot, ev('pause', 3)]);
        const got = await store.retrieve(c);
        expect(got).toEqual([first, slot, ev('pause', 3)]);
        expect(Object.keys(got?.[0] ?? {})).toEqual(Object.keys(first));
        expect(Object.keys(got?.[1]?.value as object)).toEqual(['z', 'a']);
        expect(await store.exists(c)).toBe(true);
      });

      it('keeps events without or with odd timestamps as they came', async () => {
        const c = id();
        const events = [
          { event: 'pause' } as SerializedEvent,
          ev('resume', 1700000000.123456),
          ev('slot', -1, { name: 'n', value: 0.1 }),
        ];
        await store.append(c, events);
        expect(await store.retrieve(c)).toEqual(events);
      });

      it('shares no objects with its callers', async () => {
        const c = id();
        const event = ev('slot', 1, { name: 'a', value: [1] });
        await store.append(c, [event]);
        (event.value as number[]).push(2);
        const read = await store.retrieve(c);
        (read?.[0]?.value as number[]).push(3);
        expect((await store.retrieve(c))?.[0]?.value).toEqual([1]);
      });

      it('appends a batch as a whole, next to concurrent batches, never interleaved', async () => {
        const c = id();
        const batches = Array.from({ length: 20 }, (_, b) =>
          Array.from({ length: 5 }, (_, i) => ev('slot', b * 10 + i, { name: `b${b}` })),
        );
        await Promise.all(batches.map((batch) => store.append(c, batch)));
        const got = (await store.retrieve(c)) ?? [];
        expect(got).toHaveLength(100);
        for (let i = 0; i < got.length; i += 5) {
          const names = got.slice(i, i + 5).map((e) => e.name);
          expect(new Set(names).size).toBe(1);
          expect(stamps(got.slice(i, i + 5))).toEqual(
            batches[Number(String(names[0]).slice(1))]?.map((e) => e.timestamp),
          );
        }
        expect((await store.version(c))?.lastSeq).toBe(100);
      });

      it('counts events in the version; the generation stays while appending', async () => {
        const c = id();
        await store.append(c, [ev('pause', 1), ev('resume', 2)]);
        const v1 = await store.version(c);
        expect(v1).toEqual({ generation: expect.any(String), lastSeq: 2 });
        await store.append(c, [ev('pause', 3)]);
        await store.append(c, []);
        expect(await store.version(c)).toEqual({ generation: v1?.generation, lastSeq: 3 });
      });
    });

    describe('latestSessionOnly', () => {
      it('reads everything when no session was ever started', async () => {
        const c = id();
        await store.append(c, [ev('session_started', 1), ev('action', 2, { name: 'other' })]);
        expect(stamps(await store.retrieve(c, { latestSessionOnly: true }))).toEqual([1, 2]);
        const read = await store.retrieveVersioned(c, { latestSessionOnly: true });
        expect(read?.firstSeq).toBe(1);
        expect(read?.version.lastSeq).toBe(2);
      });

      it('reads from the last action_session_start on, across and within batches', async () => {
        const c = id();
        await store.append(c, [sessionStart(1), ev('session_started', 1.1), ev('pause', 2)]);
        await store.append(c, [sessionStart(10), ev('pause', 11), sessionStart(20)]);
        await store.append(c, [ev('session_started', 20.1), ev('resume', 21)]);
        expect(stamps(await store.retrieve(c, { latestSessionOnly: true }))).toEqual([
          20, 20.1, 21,
        ]);
        expect(await store.retrieve(c)).toHaveLength(8);
        const read = await store.retrieveVersioned(c, { latestSessionOnly: true });
        expect(read).toEqual({
          events: await store.retrieve(c, { latestSessionOnly: true }),
          version: await store.version(c),
          firstSeq: 6,
        });
        const all = await store.retrieveVersioned(c);
        expect(all?.firstSeq).toBe(1);
        expect(all?.events).toHaveLength(8);
      });

      it('reads only the session start when it is the last event', async () => {
        const c = id();
        await store.append(c, [ev('pause', 1), sessionStart(2)]);
        expect(await store.retrieve(c, { latestSessionOnly: true })).toEqual([sessionStart(2)]);
        expect((await store.retrieveVersioned(c, { latestSessionOnly: true }))?.firstSeq).toBe(2);
      });

      it('follows session starts written by appendIfUnchanged and replace', async () => {
        const c = id();
        const v1 = await store.appendIfUnchanged(c, enc(ev('pause', 1), sessionStart(2)), null);
        await store.appendIfUnchanged(c, enc(ev('pause', 3), sessionStart(4), ev('pause', 5)), v1);
        expect(stamps(await store.retrieve(c, { latestSessionOnly: true }))).toEqual([4, 5]);
        await store.replace(c, [sessionStart(7), ev('pause', 8), ev('pause', 9)]);
        expect(stamps(await store.retrieve(c, { latestSessionOnly: true }))).toEqual([7, 8, 9]);
        await store.replace(c, [ev('pause', 10)]);
        expect(stamps(await store.retrieve(c, { latestSessionOnly: true }))).toEqual([10]);
        expect((await store.retrieveVersioned(c, { latestSessionOnly: true }))?.firstSeq).toBe(1);
      });
    });

    describe('retrieveAfter', () => {
      it('reads the events stored after a version, with the version now', async () => {
        const c = id();
        const v1 = await store.appendIfUnchanged(c, enc(ev('pause', 1), ev('resume', 2)), null);
        expect(v1).not.toBeNull();
        const at = v1 as StoreVersion;
        expect(await store.retrieveAfter(c, at)).toEqual({ events: [], version: at, firstSeq: 3 });
        await store.append(c, [ev('pause', 3)]);
        const v3 = await store.appendIfUnchanged(c, enc(ev('resume', 4), sessionStart(5)), {
          generation: at.generation,
          lastSeq: 3,
        });
        expect(await store.retrieveAfter(c, at)).toEqual({
          events: [ev('pause', 3), ev('resume', 4), sessionStart(5)],
          version: v3,
          firstSeq: 3,
        });
        expect(stamps((await store.retrieveAfter(c, { ...at, lastSeq: 0 }))?.events)).toEqual([
          1, 2, 3, 4, 5,
        ]);
      });

      it('answers null for a conversation created anew or gone since', async () => {
        const c = id();
        await store.append(c, [ev('pause', 1)]);
        const v1 = (await store.version(c)) as StoreVersion;
        await store.replace(c, [ev('pause', 1), ev('resume', 2)]);
        expect(await store.retrieveAfter(c, v1)).toBeNull();
        const v2 = (await store.version(c)) as StoreVersion;
        expect((await store.retrieveAfter(c, v2))?.events).toEqual([]);
        await store.delete(c);
        expect(await store.retrieveAfter(c, v2)).toBeNull();
        expect(
          await store.retrieveAfter(id(), { generation: randomUUID(), lastSeq: 0 }),
        ).toBeNull();
      });
    });

    describe('appendIfUnchanged', () => {
      it('creates a conversation only when null is expected and it does not exist', async () => {
        const c = id();
        const v1 = await store.appendIfUnchanged(c, enc(ev('pause', 1)), null);
        expect(v1).toEqual({ generation: expect.any(String), lastSeq: 1 });
        expect(await store.version(c)).toEqual(v1);
        expect(await store.appendIfUnchanged(c, enc(ev('resume', 2)), null)).toBeNull();
        expect(await store.retrieve(c)).toEqual([ev('pause', 1)]);
      });

      it('refuses an expected version of a conversation that does not exist', async () => {
        const c = id();
        const made = { generation: randomUUID(), lastSeq: 0 };
        expect(await store.appendIfUnchanged(c, enc(ev('pause', 1)), made)).toBeNull();
        expect(await store.exists(c)).toBe(false);
        expect(await store.retrieve(c)).toBeNull();
      });

      it('appends at the expected version and returns the new one', async () => {
        const c = id();
        const v1 = (await store.appendIfUnchanged(c, enc(ev('pause', 1)), null)) as StoreVersion;
        const v2 = await store.appendIfUnchanged(c, enc(ev('resume', 2), ev('pause', 3)), v1);
        expect(v2).toEqual({ generation: v1.generation, lastSeq: 3 });
        expect(await store.version(c)).toEqual(v2);
        expect(stamps(await store.retrieve(c))).toEqual([1, 2, 3]);
      });

      it('writes nothing and returns null on a stale version', async () => {
        const c = id();
        const v1 = (await store.appendIfUnchanged(c, enc(ev('pause', 1)), null)) as StoreVersion;
        const v2 = await store.appendIfUnchanged(c, enc(ev('resume', 2)), v1);
        expect(await store.appendIfUnchanged(c, enc(ev('restart', 3)), v1)).toBeNull();
        const ahead = { generation: v1.generation, lastSeq: 5 };
        expect(await store.appendIfUnchanged(c, enc(ev('restart', 4)), ahead)).toBeNull();
        const otherGeneration = { generation: randomUUID(), lastSeq: 2 };
        expect(await store.appendIfUnchanged(c, enc(ev('restart', 5)), otherGeneration)).toBe(null);
        expect(await store.retrieve(c)).toEqual([ev('pause', 1), ev('resume', 2)]);
        expect(await store.version(c)).toEqual(v2);
      });

      it('stores encoded events as their wire JSON', async () => {
        const c = id();
        const user = ev('user', 1, {
          text: 'hi "there" \\ 👋',
          parse_data: { intent: { name: 'greet', confidence: 0.9 }, entities: [] },
          metadata: { assistant_id: 'bot' },
        });
        await store.appendIfUnchanged(c, enc(user), null);
        expect(await store.retrieve(c)).toEqual([user]);
      });

      it('lets exactly one of concurrent writers at the same version win', async () => {
        const c = id();
        const v1 = (await store.appendIfUnchanged(c, enc(ev('pause', 0)), null)) as StoreVersion;
        const results = await Promise.all(
          Array.from({ length: 10 }, (_, i) =>
            store.appendIfUnchanged(c, enc(ev('slot', i + 1, { name: `w${i}` })), v1),
          ),
        );
        const winners = results.filter((r) => r !== null);
        expect(winners).toEqual([{ generation: v1.generation, lastSeq: 2 }]);
        expect(await store.retrieve(c)).toHaveLength(2);
      });

      it('lets exactly one of concurrent creators win', async () => {
        const c = id();
        const results = await Promise.all(
          Array.from({ length: 10 }, (_, i) =>
            store.appendIfUnchanged(c, enc(ev('slot', i, { name: `w${i}` }), ev('pause', i)), null),
          ),
        );
        expect(results.filter((r) => r !== null)).toHaveLength(1);
        expect(await store.retrieve(c)).toHaveLength(2);
      });

      it('judges concurrent writes to different conversations each on its own', async () => {
        const fresh = [id('a'), id('b'), id('c')];
        const existing = id('old');
        const v0 = (await store.appendIfUnchanged(existing, enc(ev('pause', 1)), null))!;
        const stale = { generation: v0.generation, lastSeq: 7 };
        const results = await Promise.all([
          ...fresh.map((c, i) => store.appendIfUnchanged(c, enc(ev('pause', i)), null)),
          store.appendIfUnchanged(existing, enc(ev('restart', 2)), stale),
          store.appendIfUnchanged(existing, enc(ev('resume', 2)), v0),
          store.appendIfUnchanged(id('missing'), enc(ev('pause', 1)), stale),
        ]);
        expect(results.map((r) => r?.lastSeq ?? null)).toEqual([1, 1, 1, null, 2, null]);
        expect(await store.retrieve(existing)).toEqual([ev('pause', 1), ev('resume', 2)]);
      });

      it('with no events, returns the expected version when it is current, else null', async () => {
        const c = id();
        const v1 = (await store.appendIfUnchanged(c, enc(ev('pause', 1)), null)) as StoreVersion;
        expect(await store.appendIfUnchanged(c, [], v1)).toEqual(v1);
        const stale = { generation: v1.generation, lastSeq: 0 };
        expect(await store.appendIfUnchanged(c, [], stale)).toBeNull();
        await store.delete(c);
        expect(await store.appendIfUnchanged(c, [], v1)).toBeNull();
        expect(await store.exists(c)).toBe(false);
      });
    });

    describe('reminders with the append', () => {
      const names = async (c: string) => (await fixture.reminders(c)).map((r) => r.name);

      it("writes a turn's reminders with its events; one of the same name replaces the stored one", async () => {
        const c = id();
        const a = reminder(c, 'a', {
          intent: 'remind',
          entities: [{ entity: 'place', value: 'home' }],
          killOnUserMessage: true,
          scheduledAt: 1.5,
        });
        const b = reminder(c, 'b', { outputChannel: null, triggerAt: AT + 1 });
        const v1 = await store.appendIfUnchanged(
          c,
          enc(ev('reminder', 1.5), ev('reminder', 1.5)),
          null,
          changes({ schedule: [a, b] }),
        );
        expect(await store.retrieve(c)).toHaveLength(2);
        expect(await fixture.reminders(c)).toEqual([a, b]);
        const a2 = reminder(c, 'a', { intent: 'again', scheduledAt: 2 });
        await store.appendIfUnchanged(c, enc(ev('reminder', 2)), v1, changes({ schedule: [a2] }));
        expect(await fixture.reminders(c)).toEqual([a2, b]);
      });

      it('cancels by name, by intent and entities (any key order) and kill_on_user_msg before a user message, never a name it sets', async () => {
        const c = id();
        const entities = [{ entity: 'x', value: 1, role: null }];
        const v1 = await store.appendIfUnchanged(
          c,
          enc(ev('reminder', 1)),
          null,
          changes({
            schedule: [
              reminder(c, 'byName'),
              reminder(c, 'byMatch', { intent: 'pong', entities }),
              reminder(c, 'otherEntities', { intent: 'pong' }),
              reminder(c, 'killed', { killOnUserMessage: true, scheduledAt: 1 }),
              reminder(c, 'later', { killOnUserMessage: true, scheduledAt: 5 }),
              reminder(c, 'notKilled', { scheduledAt: 1 }),
              reminder(c, 'reset', { killOnUserMessage: true, scheduledAt: 1 }),
            ],
          }),
        );
        const reset = reminder(c, 'reset', { intent: 'new', scheduledAt: 3 });
        await store.appendIfUnchanged(
          c,
          enc(ev('user', 3)),
          v1,
          changes({
            cancel: [
              { name: 'byName' },
              { name: 'reset' },
              { name: null, intent: 'pong', entities: [{ role: null, value: 1, entity: 'x' }] },
            ],
            killedBefore: 3,
            schedule: [reset],
          }),
        );
        expect(await names(c)).toEqual(['later', 'notKilled', 'otherEntities', 'reset']);
        expect((await fixture.reminders(c)).find((r) => r.name === 'reset')).toEqual(reset);
        // No name, intent or entities: every reminder of the conversation.
        const v3 = await store.version(c);
        await store.appendIfUnchanged(
          c,
          enc(ev('pause', 4)),
          v3,
          changes({ cancel: [{ name: null, intent: null, entities: null }] }),
        );
        expect(await names(c)).toEqual([]);
      });

      it('changes no reminder when the append is refused or brings none', async () => {
        const c = id();
        const v1 = (await store.appendIfUnchanged(
          c,
          enc(ev('reminder', 1)),
          null,
          changes({ schedule: [reminder(c, 'kept')] }),
        )) as StoreVersion;
        const stale = { generation: v1.generation, lastSeq: 0 };
        const refused = changes({
          schedule: [reminder(c, 'new')],
          cancel: [{ name: 'kept' }],
          killedBefore: 10,
        });
        expect(await store.appendIfUnchanged(c, enc(ev('reminder', 2)), stale, refused)).toBeNull();
        expect(await store.appendIfUnchanged(id(), enc(ev('pause', 2)), v1, refused)).toBeNull();
        await store.appendIfUnchanged(c, enc(ev('pause', 2)), v1);
        await store.appendIfUnchanged(c, enc(ev('pause', 3)), await store.version(c), changes({}));
        expect(await names(c)).toEqual(['kept']);
        expect(await store.retrieve(c)).toHaveLength(3);
      });

      it("applies concurrent turns' reminders each to its own conversation", async () => {
        const ids = Array.from({ length: 8 }, (_, i) => id(`r${i}`));
        const versions = await Promise.all(
          ids.map((c) =>
            store.appendIfUnchanged(
              c,
              enc(ev('reminder', 1)),
              null,
              changes({ schedule: [reminder(c, 'a'), reminder(c, 'b')] }),
            ),
          ),
        );
        await Promise.all(
          ids.map((c, i) =>
            store.appendIfUnchanged(
              c,
              enc(ev('pause', 2)),
              versions[i] ?? null,
              i % 2 === 0
                ? changes({ cancel: [{ name: null, intent: null, entities: null }] })
                : i % 3 === 0
                  ? undefined
                  : changes({ schedule: [reminder(c, 'c')], cancel: [{ name: 'a' }] }),
            ),
          ),
        );
        for (const [i, c] of ids.entries()) {
          const expected = i % 2 === 0 ? [] : i % 3 === 0 ? ['a', 'b'] : ['b', 'c'];
          expect(await names(c)).toEqual(expected);
          expect(await store.retrieve(c)).toHaveLength(2);
        }
      });
    });

    describe('generations', () => {
      it('changes on replace, delete and re-creation, so older versions go stale', async () => {
        const c = id();
        const v1 = (await store.appendIfUnchanged(c, enc(ev('pause', 1)), null)) as StoreVersion;
        await store.replace(c, [ev('resume', 2)]);
        const v2 = (await store.version(c)) as StoreVersion;
        expect(v2.lastSeq).toBe(1);
        expect(v2.generation).not.toBe(v1.generation);
        expect(await store.appendIfUnchanged(c, enc(ev('pause', 3)), v1)).toBeNull();
        expect(await store.delete(c)).toBe(true);
        expect(await store.appendIfUnchanged(c, enc(ev('pause', 3)), v2)).toBeNull();
        expect(await store.exists(c)).toBe(false);
        const v3 = (await store.appendIfUnchanged(c, enc(ev('pause', 4)), null)) as StoreVersion;
        expect(v3.lastSeq).toBe(1);
        expect([v1.generation, v2.generation]).not.toContain(v3.generation);
        await store.delete(c);
        await store.append(c, [ev('pause', 5)]);
        const v4 = (await store.version(c)) as StoreVersion;
        expect([v1.generation, v2.generation, v3.generation]).not.toContain(v4.generation);
      });
    });

    describe('replace', () => {
      it('replaces every event at once and restarts the count', async () => {
        const c = id();
        await store.append(c, [ev('pause', 1), ev('resume', 2), ev('pause', 3)]);
        await store.replace(c, [ev('restart', 5), ev('pause', 6)]);
        expect(await store.retrieve(c)).toEqual([ev('restart', 5), ev('pause', 6)]);
        expect((await store.version(c))?.lastSeq).toBe(2);
        await store.append(c, [ev('resume', 7)]);
        expect(stamps(await store.retrieve(c))).toEqual([5, 6, 7]);
      });

      it('creates a conversation that did not exist', async () => {
        const c = id();
        await store.replace(c, [ev('pause', 1)]);
        expect(await store.retrieve(c)).toEqual([ev('pause', 1)]);
        expect(await store.exists(c)).toBe(true);
      });

      it('with no events, leaves no conversation behind', async () => {
        const c = id();
        await store.append(c, [ev('pause', 1)]);
        await store.replace(c, []);
        expect(await store.retrieve(c)).toBeNull();
        expect(await store.version(c)).toBeNull();
        expect(await store.exists(c)).toBe(false);
        await store.replace(id(), []);
      });
    });

    describe('delete and exists', () => {
      it('deletes once, and a conversation started again starts from nothing', async () => {
        const c = id();
        await store.append(c, [ev('pause', 1), ev('resume', 2)]);
        expect(await store.exists(c)).toBe(true);
        expect(await store.delete(c)).toBe(true);
        expect(await store.delete(c)).toBe(false);
        expect(await store.exists(c)).toBe(false);
        expect(await store.retrieve(c)).toBeNull();
        await store.append(c, [ev('restart', 9)]);
        expect(await store.retrieve(c)).toEqual([ev('restart', 9)]);
        expect((await store.version(c))?.lastSeq).toBe(1);
      });
    });

    describe('payloads', () => {
      it('keeps quotes, backslashes, control characters and unicode intact', async () => {
        const c = id('ünï-"code"-👋');
        const text = 'say "hi" \\ {x} \n\t 👋 中文 ﷺ \u2028 nul \u0000 end';
        const event = ev('bot', 1, { text, metadata: { 'k"ey': 'v\\al' }, data: {} });
        await store.append(c, [event]);
        expect(await store.retrieve(c)).toEqual([event]);
        expect(await store.exists(c)).toBe(true);
      });

      it('keeps large events and large batches', async () => {
        const c = id();
        const big = ev('bot', 1, { text: 'x'.repeat(2 * 1024 * 1024) });
        const many = Array.from({ length: 3000 }, (_, i) =>
          ev('slot', i + 2, { name: 's', value: i }),
        );
        await store.append(c, [big]);
        await store.appendIfUnchanged(c, enc(...many), await store.version(c));
        const got = (await store.retrieve(c)) ?? [];
        expect(got).toHaveLength(3001);
        expect(got[0]).toEqual(big);
        expect(got.slice(1).map((e) => e.value)).toEqual(many.map((e) => e.value));
      });
    });

    describe('many conversations', () => {
      it('keeps each conversation to itself, however alike their ids', async () => {
        const base = id();
        const ids = [base, `${base}-1`, base.toUpperCase(), ` ${base}`, `${base}%`, `${base}_`];
        const extra = Array.from({ length: 24 }, (_, i) => id(`many${i}`));
        const all = [...ids, ...extra];
        await Promise.all(
          all.map(async (c, i) => {
            for (let round = 0; round < 3; round++) {
              await store.append(c, [ev('slot', round, { name: 'who', value: c }), ev('pause', i)]);
            }
          }),
        );
        for (const c of all) {
          const got = (await store.retrieve(c)) ?? [];
          expect(got).toHaveLength(6);
          expect(got.filter((e) => e.event === 'slot').map((e) => e.value)).toEqual([c, c, c]);
        }
        expect(await store.delete(base)).toBe(true);
        for (const c of all.slice(1)) expect(await store.exists(c)).toBe(true);
        await store.replace(`${base}-1`, [ev('restart', 1)]);
        expect(await store.retrieve(`${base}_`)).toHaveLength(6);
      });
    });
  });
}
