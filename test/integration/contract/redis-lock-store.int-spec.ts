import { RedisLockStore } from 'src/modules/tracker';
import { describeLockStoreContract } from 'test/contract/lock-store.contract';
import { describeWithRedis, redisConnection, uniqueKeyPrefix } from 'test/utils/redis';

describeWithRedis('RedisLockStore', (redis) => {
  describeLockStoreContract(RedisLockStore.name, async (options = {}) => {
    const store = new RedisLockStore({
      connection: redisConnection(redis()),
      keyPrefix: uniqueKeyPrefix('contract'),
      lifetimeMs: 60_000,
      lockTimeoutMs: options.lockTimeoutMs ?? 30_000,
    });
    await store.start();
    return { store, dispose: () => store.onApplicationShutdown() };
  });
});
