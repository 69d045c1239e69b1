import { parseStoreEndpoints, RedisLockStore } from 'src/modules/tracker';
import { describeLockStoreContract } from 'test/contract/lock-store.contract';
import { uniqueKeyPrefix } from 'test/utils/redis';
import { describeWithRedisCluster } from 'test/utils/redis-ha';

describeWithRedisCluster('RedisLockStore (deployment_mode: cluster)', (cluster) => {
  describeLockStoreContract(`${RedisLockStore.name} on a Redis Cluster`, async (options = {}) => {
    const { lockStore } = parseStoreEndpoints('endpoints.yml', {
      lock_store: {
        type: 'concurrent_redis',
        deployment_mode: 'cluster',
        endpoints: cluster().endpoints,
        socket_timeout: 2,
      },
    });
    if (lockStore?.type !== 'redis') throw new Error('not a Redis lock store');
    const store = new RedisLockStore({
      connection: lockStore.connection,
      keyPrefix: uniqueKeyPrefix('contract'),
      lifetimeMs: 60_000,
      lockTimeoutMs: options.lockTimeoutMs ?? 30_000,
    });
    await store.start();
    return { store, dispose: () => store.onApplicationShutdown() };
  });
});
