import { InMemoryReminderStore, InMemoryTrackerStore } from 'src/core';
import { describeTrackerStoreContract } from 'test/contract/tracker-store.contract';

describeTrackerStoreContract(InMemoryTrackerStore.name, () => {
  const reminders = new InMemoryReminderStore();
  return Promise.resolve({
    store: new InMemoryTrackerStore(reminders),
    reminders: (conversationId: string) =>
      Promise.resolve(
        reminders
          .list()
          .filter((r) => r.conversationId === conversationId)
          .sort((a, b) => (a.name < b.name ? -1 : 1)),
      ),
    dispose: () => Promise.resolve(),
  });
});
