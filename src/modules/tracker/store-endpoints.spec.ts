import { parseStoreEndpoints } from './store-endpoints';

const parse = (data: Record<string, unknown>) => parseStoreEndpoints('endpoints.yml', data);

describe('parseStoreEndpoints', () => {
  it('reads no store when endpoints.yml names none', () => {
    expect(parse({})).toEqual({ lockStore: null, trackerStore: null, warnings: [] });
    expect(parse({ lock_store: null, tracker_store: null }).lockStore).toBeNull();
  });

  describe('lock_store', () => {
    it.each(['redis', 'concurrent_redis'])(
      'reads type %s with Rasa defaults (port 6379, db 1, socket_timeout 10 s)',
      (type) => {
        expect(parse({ lock_store: { type, host: 'redis.internal' } }).lockStore).toEqual({
          type: 'redis',
          spelledAs: type,
          connection: {
            deploymentMode: 'standard',
            host: 'redis.internal',
            port: 6379,
            endpoints: [],
            sentinelService: null,
            tlsFiles: { certFile: null, keyFile: null, caCerts: null },
            db: 1,
            username: null,
            password: null,
            useSsl: false,
            socketTimeoutMs: 10_000,
          },
          keyPrefix: null,
        });
      },
    );

    it('reads every key, with url as the older spelling of host', () => {
      const { lockStore, warnings } = parse({
        lock_store: {
          type: 'concurrent_redis',
          url: 'cache',
          port: '6380',
          db: 3,
          username: 'parley',
          password: 's3cret',
          use_ssl: true,
          key_prefix: 'bot1',
          socket_timeout: 2.5,
        },
      });
      expect(warnings).toEqual([]);
      expect(lockStore).toEqual({
        type: 'redis',
        spelledAs: 'concurrent_redis',
        connection: {
          deploymentMode: 'standard',
          host: 'cache',
          port: 6380,
          endpoints: [],
          sentinelService: null,
          tlsFiles: { certFile: null, keyFile: null, caCerts: null },
          db: 3,
          username: 'parley',
          password: 's3cret',
          useSsl: true,
          socketTimeoutMs: 2500,
        },
        keyPrefix: 'bot1',
      });
    });

    it('takes a redis:// URL in url or host apart', () => {
      const { lockStore } = parse({
        lock_store: { type: 'redis', url: 'rediss://u:p%40ss@10.0.0.5:7000/4' },
      });
      expect(lockStore).toMatchObject({
        connection: {
          host: '10.0.0.5',
          port: 7000,
          db: 4,
          username: 'u',
          password: 'p@ss',
          useSsl: true,
        },
      });
    });

    it('ignores a key_prefix that is not alphanumeric, with a warning (as Rasa)', () => {
      const { lockStore, warnings } = parse({
        lock_store: { type: 'redis', key_prefix: 'my-bot:' },
      });
      expect(lockStore).toMatchObject({ keyPrefix: null });
      expect(warnings).toEqual([
        'endpoints.yml: lock_store.key_prefix is not alphanumeric and is ignored (keys have no prefix)',
      ]);
    });

    it('reads deployment_mode cluster: endpoints as "host:port" seeds, db forced to 0', () => {
      const { lockStore, warnings } = parse({
        lock_store: {
          type: 'concurrent_redis',
          deployment_mode: 'cluster',
          endpoints: ['redis-0:7000', '[::1]:7001', 'redis-2'],
          db: 3,
        },
      });
      expect(lockStore).toMatchObject({
        connection: {
          deploymentMode: 'cluster',
          endpoints: [
            { host: 'redis-0', port: 7000 },
            { host: '::1', port: 7001 },
            { host: 'redis-2', port: 6379 },
          ],
          db: 0,
          sentinelService: null,
        },
      });
      expect(warnings).toEqual([
        'endpoints.yml: lock_store.db is ignored in deployment_mode cluster (Redis Cluster has database 0 only)',
      ]);
    });

    it('reads deployment_mode sentinel: the sentinels (port 26379) and sentinel_service', () => {
      const read = (extra: Record<string, unknown>) =>
        parse({
          lock_store: {
            type: 'redis',
            deployment_mode: 'sentinel',
            endpoints: 's1:26380, s2',
            db: 2,
            ...extra,
          },
        }).lockStore;
      expect(read({ sentinel_service: 'bots' })).toMatchObject({
        connection: {
          deploymentMode: 'sentinel',
          endpoints: [
            { host: 's1', port: 26380 },
            { host: 's2', port: 26379 },
          ],
          sentinelService: 'bots',
          db: 2,
        },
      });
      expect(read({})).toMatchObject({ connection: { sentinelService: 'mymaster' } });
    });

    it('reads the ssl_* files only with use_ssl, warning otherwise', () => {
      const files = { ssl_certfile: 'c.pem', ssl_keyfile: 'k.pem', ssl_ca_certs: 'ca.pem' };
      const on = parse({ lock_store: { type: 'redis', use_ssl: true, ...files } });
      expect(on.lockStore).toMatchObject({
        connection: {
          useSsl: true,
          tlsFiles: { certFile: 'c.pem', keyFile: 'k.pem', caCerts: 'ca.pem' },
        },
      });
      expect(on.warnings).toEqual([]);
      const off = parse({ lock_store: { type: 'redis', ...files } });
      expect(off.lockStore).toMatchObject({
        connection: { useSsl: false, tlsFiles: { certFile: null, keyFile: null, caCerts: null } },
      });
      expect(off.warnings).toEqual([
        'endpoints.yml: lock_store.ssl_certfile is ignored: use_ssl is false',
        'endpoints.yml: lock_store.ssl_keyfile is ignored: use_ssl is false',
        'endpoints.yml: lock_store.ssl_ca_certs is ignored: use_ssl is false',
      ]);
    });

    it('warns about HA keys that the deployment mode does not use', () => {
      expect(
        parse({ lock_store: { type: 'redis', endpoints: ['a:1'], sentinel_service: 'm' } })
          .warnings,
      ).toEqual([
        'endpoints.yml: lock_store.endpoints is ignored in deployment_mode standard (host and port are used)',
        'endpoints.yml: lock_store.sentinel_service is ignored outside deployment_mode sentinel',
      ]);
    });

    it.each([
      [
        { deployment_mode: 'replicated' },
        'lock_store.deployment_mode must be one of standard, cluster, sentinel',
      ],
      [
        { deployment_mode: 'cluster', endpoints: { a: 1 } },
        'lock_store.endpoints must be a list of "host:port" strings',
      ],
      [
        { deployment_mode: 'cluster', endpoints: ['a:1', 'b:x'] },
        `lock_store.endpoints[1] 'b:x' is not a "host:port" address`,
      ],
      [
        { deployment_mode: 'cluster', endpoints: ['a:70000'] },
        `lock_store.endpoints[0] 'a:70000' is not a "host:port" address`,
      ],
      [
        { deployment_mode: 'cluster', endpoints: [7000] },
        'lock_store.endpoints[0] must be a "host:port" string',
      ],
      [
        { deployment_mode: 'sentinel' },
        'lock_store.endpoints must list the sentinels ("host:port") in deployment_mode sentinel',
      ],
      [
        { use_ssl: true, ssl_certfile: 'c.pem' },
        'lock_store.ssl_keyfile is missing: a client certificate needs both ssl_certfile and ssl_keyfile',
      ],
    ])('refuses %j, naming the key', (extra, message) => {
      expect(() => parse({ lock_store: { type: 'redis', ...extra } })).toThrow(message);
    });

    it('reads type in_memory as the in-process store', () => {
      expect(parse({ lock_store: { type: 'in_memory' } }).lockStore).toEqual({
        type: 'in_memory',
      });
    });

    it.each([
      [{ type: 'mongo' }, "lock_store type 'mongo' is not supported"],
      [{ type: 'my.module.LockStore' }, "lock_store type 'my.module.LockStore' is not supported"],
      [{ host: 'x' }, 'lock_store needs a type'],
      ['redis', 'lock_store must be a mapping'],
    ])('refuses %j at start, naming the supported types', (entry, message) => {
      expect(() => parse({ lock_store: entry })).toThrow(message);
      try {
        parse({ lock_store: entry });
      } catch (e) {
        expect(e).toMatchObject({ code: 'CONFIG.INVALID' });
        if (typeof entry === 'object') {
          expect((e as Error).message).toContain('supported: redis, concurrent_redis, in_memory');
        }
      }
    });

    it.each([
      [{ port: 0 }, 'lock_store.port must be an integer from 1 to 65535'],
      [{ port: 'abc' }, 'lock_store.port must be an integer'],
      [{ db: -1 }, 'lock_store.db must be an integer'],
      [{ socket_timeout: 0 }, 'lock_store.socket_timeout must be a number of seconds'],
      [{ socket_timeout: '10' }, 'lock_store.socket_timeout must be a number of seconds'],
      [{ use_ssl: 'yes' }, 'lock_store.use_ssl must be true or false'],
      [{ url: 'redis://[bad' }, 'lock_store.url is not a valid redis:// URL'],
      [{ host: { nested: true } }, 'lock_store.host must be a string'],
    ])('refuses a bad value %j', (keys, message) => {
      expect(() => parse({ lock_store: { type: 'redis', ...keys } })).toThrow(message);
    });
  });

  describe('tracker_store', () => {
    it('builds a PostgreSQL URL from type sql, dialect postgresql and its parts', () => {
      const { trackerStore } = parse({
        tracker_store: {
          type: 'sql',
          dialect: 'postgresql',
          url: 'db.internal',
          port: 5433,
          db: 'rasa',
          username: 'me',
          password: 'p@ss/word',
        },
      });
      expect(trackerStore).toEqual({
        type: 'sql',
        url: 'postgresql://me:p%40ss%2Fword@db.internal:5433/rasa',
      });
      expect(new URL(trackerStore!.url).password).toBe('p%40ss%2Fword');
    });

    it('accepts host, the default port and a driver suffix on the dialect', () => {
      const { trackerStore } = parse({
        tracker_store: { type: 'sql', dialect: 'postgresql+psycopg2', host: 'pg', db: 'bots' },
      });
      expect(trackerStore).toEqual({ type: 'sql', url: 'postgresql://pg:5432/bots' });
    });

    it('accepts a whole postgresql:// URL', () => {
      const url = 'postgresql://u:p@pg:5432/rasa';
      expect(parse({ tracker_store: { type: 'sql', url } }).trackerStore).toEqual({
        type: 'sql',
        url,
      });
    });

    it('accepts type in_memory with a warning: conversations stay in PostgreSQL', () => {
      const { trackerStore, warnings } = parse({ tracker_store: { type: 'in_memory' } });
      expect(trackerStore).toBeNull();
      expect(warnings[0]).toContain("tracker_store type 'in_memory' is not used");
    });

    it.each([
      [{ type: 'redis', url: 'localhost' }, "tracker_store type 'redis' is not supported"],
      [{ type: 'mongod', url: 'mongodb://x' }, "tracker_store type 'mongod' is not supported"],
      [{ type: 'dynamo' }, "tracker_store type 'dynamo' is not supported"],
      [{ type: 'my.module.Store' }, "tracker_store type 'my.module.Store' is not supported"],
      [{ type: 'sql', db: 'rasa.db' }, "tracker_store dialect 'sqlite' is not supported"],
      [{ type: 'sql', dialect: 'mysql', db: 'x' }, "tracker_store dialect 'mysql' is not"],
      [{ type: 'sql', dialect: 'postgresql', host: 'pg' }, "tracker_store needs a 'db'"],
      [{ url: 'x' }, 'tracker_store needs a type'],
    ])('refuses %j at start, naming what is supported', (entry, message) => {
      expect(() => parse({ tracker_store: entry })).toThrow(message);
      if ('type' in entry && !message.includes("'db'")) {
        expect(() => parse({ tracker_store: entry })).toThrow(
          'supported: sql (dialect: postgresql)',
        );
      }
    });
  });
});
