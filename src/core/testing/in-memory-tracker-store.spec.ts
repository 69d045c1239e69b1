import { type SerializedEvent } from 'src/core/events/serialized-event';
import { InMemoryTrackerStore } from 'src/core/testing/in-memory-tracker-store';

const start: SerializedEvent = { event: 'action', timestamp: 1, name: 'action_session_start' };
const user: SerializedEvent = { event: 'user', timestamp: 2, text: 'hi' };

describe(InMemoryTrackerStore.name, () => {
  it('appends, retrieves all or the latest session, replaces and deletes', async () => {
    const store = new InMemoryTrackerStore();
    expect(await store.retrieve('c')).toBeNull();
    expect(await store.exists('c')).toBe(false);
    await store.append('c', [user, start]);
    await store.append('c', [user]);
    expect(await store.retrieve('c')).toEqual([user, start, user]);
    expect(await store.retrieve('c', { latestSessionOnly: true })).toEqual([start, user]);
    expect(await store.exists('c')).toBe(true);
    await store.replace('c', [start]);
    expect(await store.retrieve('c')).toEqual([start]);
    expect(await store.delete('c')).toBe(true);
    expect(await store.delete('c')).toBe(false);
    expect(await store.retrieve('c')).toBeNull();
  });

  it('copies events in and out', async () => {
    const store = new InMemoryTrackerStore();
    const event: SerializedEvent = { event: 'slot', timestamp: 1, name: 'a', value: [1] };
    await store.append('c', [event]);
    (event.value as number[]).push(2);
    const [stored] = (await store.retrieve('c')) ?? [];
    expect(stored?.value).toEqual([1]);
  });
});
