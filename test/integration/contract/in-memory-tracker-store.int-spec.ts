import { InMemoryTrackerStore } from 'src/core';
import { describeTrackerStoreContract } from 'test/contract/tracker-store.contract';

describeTrackerStoreContract(InMemoryTrackerStore.name, () =>
  Promise.resolve({ store: new InMemoryTrackerStore(), dispose: () => Promise.resolve() }),
);
