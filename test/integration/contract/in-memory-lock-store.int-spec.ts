import { InMemoryLockStore } from 'src/core';
import { describeLockStoreContract } from 'test/contract/lock-store.contract';

describeLockStoreContract(InMemoryLockStore.name, (options = {}) =>
  Promise.resolve({
    store: new InMemoryLockStore({ waitTimeoutMs: options.lockTimeoutMs }),
    dispose: () => Promise.resolve(),
  }),
);
