import { PostgresLockStore } from 'src/modules/tracker';
import { describeLockStoreContract } from 'test/contract/lock-store.contract';

describeLockStoreContract(PostgresLockStore.name, (options = {}) => {
  const url = process.env.DATABASE_URL;
  if (!url) throw new Error('DATABASE_URL missing');
  const store = new PostgresLockStore(url, 4, options.lockTimeoutMs ?? 30_000);
  return Promise.resolve({ store, dispose: () => store.onApplicationShutdown() });
});
