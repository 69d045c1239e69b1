import { Logger, OnApplicationShutdown } from '@nestjs/common';
import Redis, { Cluster, type ClusterOptions, type RedisOptions } from 'ioredis';
import { createHash, randomUUID } from 'node:crypto';
import {
  DialogueError,
  InMemoryLockStore,
  LockStore,
  RETRY_AFTER_DETAIL,
  type HandedOverEvents,
  type LockLease,
  type StoreVersion,
} from 'src/core';
import { readRedisTlsFiles, type RedisConnectionSettings } from './store-endpoints';

/** A standalone or Sentinel-found server, or a Redis Cluster. */
type RedisClient = Redis | Cluster;

export interface RedisLockStoreOptions {
  readonly connection: RedisConnectionSettings;
  /** Valid `key_prefix` of endpoints.yml, or null. */
  readonly keyPrefix: string | null;
  /** Lease of a ticket (`TICKET_LOCK_LIFETIME`): a holder that outlives it lets the next in. */
  readonly lifetimeMs: number;
  /** Longest wait for a busy conversation (`LOCK_TIMEOUT_MS`), then `LOCK.TIMEOUT`. */
  readonly lockTimeoutMs: number;
  /** Re-check a waiting ticket this often even without a wake-up message (lease expiry). */
  readonly recheckMs?: number;
}

/** Seconds a client is told to wait before retrying a turn the lock store could not lock. */
export const LOCK_STORE_RETRY_AFTER_SECONDS = 1;
const DEFAULT_RECHECK_MS = 200;
/**
 * How long a handed-over version is kept for the conversation's next turn (Rasa's default
 * session expiry): a conversation idle for longer is read from the database anyway.
 */
const VERSION_TTL_MS = 60 * 60 * 1000;
/**
 * How long a conversation's recent events are kept for its next holder: turns of a conversation
 * in progress come within minutes; after that the next holder reads them from the database, and
 * Redis does not keep every recent conversation of a busy deployment for the hour above.
 */
const RECENT_TTL_MS = 5 * 60 * 1000;
/** Recent events longer than this are not handed over (the next holder reads). */
const MAX_RECENT_CHARS = 32 * 1024;

/**
 * Issues a ticket: `INCR` of the conversation's counter, a ticket key holding the caller's
 * token with the lease as TTL, the number in the conversation's queue (a sorted set, so the
 * first live ticket is found without KEYS). Then the check below, so that an uncontended lock
 * costs this one round trip. Returns {ticket number, 1 held | 0 waiting, handed-over version,
 * handed-over recent events}.
 *
 * The handed-over version (the conversation's stored version as the previous holder left it,
 * see RELEASE) and the conversation's recent events are taken out of Redis by the ticket that
 * gets the lock: a holder that dies leaves none behind, so the next one asks the database.
 * KEYS: counter, queue, version, recent events. ARGV: ticket key base, token, lease ms.
 */
const CHECK_BODY = `
local function touch(keys, lease)
  redis.call('PEXPIRE', keys[1], lease * 2)
  redis.call('PEXPIRE', keys[2], lease * 2)
end
local function check(keys, base, n, token, lease)
  local mine = base .. n
  if redis.call('GET', mine) ~= token then return {-1, false} end
  while true do
    local first = redis.call('ZRANGE', keys[2], 0, 0)[1]
    if first == nil then return {-1, false} end
    if first == n then
      redis.call('PEXPIRE', mine, lease)
      touch(keys, lease)
      local version = redis.call('GET', keys[3])
      local recent = false
      if version then
        recent = redis.call('GET', keys[4])
        redis.call('DEL', keys[3], keys[4])
      end
      return {1, version, recent}
    end
    if redis.call('EXISTS', base .. first) == 1 then
      redis.call('PEXPIRE', mine, lease)
      touch(keys, lease)
      return {0, false}
    end
    redis.call('ZREM', keys[2], first)
  end
end
`;

const ISSUE = `${CHECK_BODY}
local lease = tonumber(ARGV[3])
local n = tostring(redis.call('INCR', KEYS[1]))
redis.call('SET', ARGV[1] .. n, ARGV[2], 'PX', lease)
redis.call('ZADD', KEYS[2], n, n)
local state = check(KEYS, ARGV[1], n, ARGV[2], lease)
return {tonumber(n), state[1], state[2], state[3]}
`;

/**
 * Checks a waiting ticket: expired tickets ahead of it are dropped; it holds the lock when it
 * is the first live one (its TTL is then reset to a full lease). A waiting ticket's TTL is
 * renewed too, so a live waiter never expires while a dead one does. -1: the ticket is gone
 * (expired while Redis was unreachable): issue a new one. Returns {state, handed-over version,
 * handed-over recent events}.
 * KEYS: counter, queue, version, recent events. ARGV: ticket key base, ticket number, token, lease ms.
 */
const CHECK = `${CHECK_BODY}
return check(KEYS, ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4]))
`;

/**
 * Gives a ticket back, found by its token (so a ticket whose number the client never learnt —
 * a timed-out issue Redis still ran — is given back too): its key and queue entry go; an empty
 * queue takes the counter with it; the waiters of the conversation are told (PUBLISH).
 * A holder whose ticket was still alive (its lease held throughout) leaves the conversation's
 * version for the next holder (ARGV[5], '' for none), and the conversation's recent events up to
 * it (ARGV[7], '' for none); any other release clears both, so nothing is handed over by a holder another
 * may have overtaken.
 * KEYS: counter, queue, version, recent events. ARGV: ticket key base, token, channel, conversation id,
 * version, version TTL ms, recent events, their TTL ms.
 */
const RELEASE = `
local alive = false
for _, n in ipairs(redis.call('ZRANGE', KEYS[2], 0, -1)) do
  if redis.call('GET', ARGV[1] .. n) == ARGV[2] then
    redis.call('DEL', ARGV[1] .. n)
    redis.call('ZREM', KEYS[2], n)
    alive = true
    break
  end
end
if alive and ARGV[5] ~= '' then
  redis.call('SET', KEYS[3], ARGV[5], 'PX', tonumber(ARGV[6]))
  if ARGV[7] ~= '' then
    redis.call('SET', KEYS[4], ARGV[7], 'PX', tonumber(ARGV[8]))
  else
    redis.call('DEL', KEYS[4])
  end
else
  redis.call('DEL', KEYS[3], KEYS[4])
end
if redis.call('ZCARD', KEYS[2]) == 0 then
  redis.call('DEL', KEYS[1], KEYS[2])
  return 0
end
redis.call('PUBLISH', ARGV[3], ARGV[4])
return 1
`;

interface LockCommands {
  parleyLockIssue(
    counter: string,
    queue: string,
    version: string,
    recent: string,
    base: string,
    token: string,
    lease: number,
  ): Promise<[number, number, string | null, (string | null)?]>;
  parleyLockCheck(
    counter: string,
    queue: string,
    version: string,
    recent: string,
    base: string,
    n: string,
    token: string,
    lease: number,
  ): Promise<[number, string | null, (string | null)?]>;
  parleyLockRelease(
    counter: string,
    queue: string,
    version: string,
    recent: string,
    base: string,
    token: string,
    channel: string,
    conversationId: string,
    leftVersion: string,
    versionTtlMs: number,
    leftRecent: string,
    recentTtlMs: number,
  ): Promise<number>;
}

/**
 * LockStore for several Parley instances sharing a Redis: Rasa's `concurrent_redis` ticket
 * lock (`<prefix>concurrent_lock:<conversation>:<n>` ticket keys with a TTL, numbers from
 * `INCR` of `…:last_issued_ticket_number`), made atomic with Lua scripts and a sorted-set queue
 * per conversation instead of KEYS. Waiters are woken by a PUBLISH on release, with a short
 * fallback re-check for leases that expire. Inside one process, waiters queue in memory first,
 * so each instance has at most one ticket per conversation in Redis. A holder hands the
 * conversation's stored version to the next one (`…:version`, taken by the ticket that gets the
 * lock): an instance whose cached session is at that version skips the database's version check.
 *
 * Fails closed: a Redis that is down or does not answer within `socket_timeout` fails the turn
 * with `LOCK.STORE_UNAVAILABLE` (503, Retry-After), never runs it unlocked; commands are not
 * queued while disconnected, and the client reconnects by itself.
 */
export class RedisLockStore extends LockStore implements OnApplicationShutdown {
  private readonly logger = new Logger(RedisLockStore.name);
  private readonly local: InMemoryLockStore;
  private readonly client: RedisClient & LockCommands;
  private readonly subscriber: RedisClient;
  private readonly cluster: boolean;
  private readonly prefix: string;
  private readonly channel: string;
  private readonly recheckMs: number;
  private readonly wakers = new Map<string, Set<() => void>>();
  private lastErrorLog = 0;
  private closed = false;

  /** This store's id in the versions it leaves (which instance stored them). */
  private readonly instance = randomUUID();
  /** When this store last took over a version another instance stored (ms; none: -Infinity). */
  private othersSeenAt = -Infinity;

  /**
   * Whether conversations move between instances here: this store took over a version another
   * instance stored within {@link OTHERS_WINDOW_MS}. Only then do holders pass events on (see
   * TicketLease); `seen`: the lease at hand took over such a version.
   */
  private othersSeen(seen = false): boolean {
    const now = Date.now();
    if (seen) this.othersSeenAt = now;
    return now - this.othersSeenAt < OTHERS_WINDOW_MS;
  }

  constructor(private readonly options: RedisLockStoreOptions) {
    super();
    this.local = new InMemoryLockStore({ waitTimeoutMs: options.lockTimeoutMs });
    this.recheckMs = options.recheckMs ?? DEFAULT_RECHECK_MS;
    this.prefix = `${options.keyPrefix === null ? '' : `${options.keyPrefix}:`}concurrent_lock:`;
    const c = options.connection;
    this.cluster = c.deploymentMode === 'cluster';
    this.channel = `${this.prefix}released:${c.db}`;
    // Read now: a missing file fails the start naming its key.
    const tls = c.useSsl ? readRedisTlsFiles(c.tlsFiles) : null;
    const common: RedisOptions = {
      ...(c.username !== null ? { username: c.username } : {}),
      ...(c.password !== null ? { password: c.password } : {}),
      ...(tls !== null ? { tls: { ...tls } } : {}),
      connectTimeout: c.socketTimeoutMs,
      disconnectTimeout: 500,
      // Reconnect soon after Redis is back: at most a second between attempts.
      retryStrategy: (times: number) => Math.min(times * 100, 1000),
      lazyConnect: true,
    };
    // Commands fail closed at once while disconnected, rather than queue turns behind an outage.
    const failFast: RedisOptions = {
      commandTimeout: c.socketTimeoutMs,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      autoResendUnfulfilledCommands: false,
      // Each command is written at once: batching a tick's commands (auto-pipelining) held
      // every ticket back to the next tick and cost more CPU than the writes it saved
      // (bench/lock-wake.js: about half the lock rate at 50 conversations).
      enableAutoPipelining: false,
    };
    const create = (extra: RedisOptions, name: string): RedisClient => {
      if (c.deploymentMode === 'cluster') {
        const seeds = c.endpoints.length > 0 ? c.endpoints : [{ host: c.host, port: c.port }];
        const options: ClusterOptions = {
          lazyConnect: true,
          enableOfflineQueue: extra.enableOfflineQueue ?? true,
          // Its CLUSTER INFO would meet the closed offline queue and fail every connection.
          enableReadyCheck: extra.enableOfflineQueue !== false,
          clusterRetryStrategy: (times: number) => Math.min(times * 100, 1000),
          slotsRefreshTimeout: c.socketTimeoutMs,
          // A node whose address is a host name keeps it for TLS (its certificate's name).
          ...(tls !== null ? { dnsLookup: (address, done) => done(null, address) } : {}),
          redisOptions: { ...common, ...extra, lazyConnect: false, connectionName: name },
        };
        return new Cluster(
          seeds.map((n) => ({ host: n.host, port: n.port })),
          options,
        );
      }
      if (c.deploymentMode === 'sentinel') {
        return new Redis({
          ...common,
          ...extra,
          sentinels: c.endpoints.map((n) => ({ host: n.host, port: n.port })),
          name: c.sentinelService ?? undefined,
          role: 'master',
          db: c.db,
          sentinelRetryStrategy: (times: number) => Math.min(times * 100, 1000),
          sentinelCommandTimeout: c.socketTimeoutMs,
          // No failoverDetector: its sentinel subscriptions outlive quit() (ioredis 5.11).
          // A former master turned replica refuses writes: find the master again.
          reconnectOnError: (err: Error) => err.message.startsWith('READONLY'),
          ...(tls !== null ? { enableTLSForSentinelMode: true, sentinelTLS: { ...tls } } : {}),
          connectionName: name,
        });
      }
      return new Redis({
        ...common,
        ...extra,
        host: c.host,
        port: c.port,
        db: c.db,
        connectionName: name,
      });
    };
    this.client = create(failFast, 'parley-locks') as RedisClient & LockCommands;
    this.client.defineCommand('parleyLockIssue', { numberOfKeys: 4, lua: ISSUE });
    this.client.defineCommand('parleyLockCheck', { numberOfKeys: 4, lua: CHECK });
    this.client.defineCommand('parleyLockRelease', { numberOfKeys: 4, lua: RELEASE });
    // Standalone and Sentinel: the wake-up channel is subscribed again on every `ready` by this
    // store, not by ioredis' autoResubscribe, whose SELECT and SUBSCRIBE after a reconnection
    // reject unhandled ("Connection is closed.") when the connection drops again before they
    // are answered (a failover, a shutdown). A Cluster keeps its own subscriber connection.
    this.subscriber = create(this.cluster ? {} : { autoResubscribe: false }, 'parley-locks-wake');
    if (!this.cluster) this.subscriber.on('ready', () => this.subscribe());
    this.client.on('error', (err: Error) => this.logError('lock store connection', err));
    this.subscriber.on('error', (err: Error) => this.logError('lock wake-up connection', err));
    this.subscriber.on('message', (_channel: string, conversationId: string) =>
      this.wake(conversationId),
    );
  }

  /**
   * Connects both connections, waiting at most `socket_timeout`: a Redis that is not there
   * yet is a warning (turns fail closed until it is), not a failed start.
   */
  async start(): Promise<void> {
    const timeout = this.options.connection.socketTimeoutMs;
    const connect = async (redis: RedisClient): Promise<void> => {
      try {
        await withTimeout(redis.connect(), timeout);
      } catch (err) {
        this.logger.warn(
          { err: (err as Error).message, host: this.options.connection.host },
          'Redis lock store not reachable at start; turns fail with 503 until it is',
        );
      }
    };
    await Promise.all([connect(this.client), connect(this.subscriber)]);
    // A Cluster queues it while disconnected and sends it again after every reconnection
    // (autoResubscribe); the others subscribe on each `ready` (constructor).
    if (this.cluster) this.subscribe();
  }

  private subscribe(): void {
    this.subscriber.subscribe(this.channel).catch((err: Error) => {
      this.logError('lock wake-up subscription', err);
    });
  }

  /** A lease carries the recent events the previous holder left (see RELEASE). */
  override handsOverEvents(): boolean {
    return true;
  }

  withLock<T>(conversationId: string, work: (lease: LockLease) => Promise<T>): Promise<T> {
    const deadline = Date.now() + this.options.lockTimeoutMs;
    return this.local.withLock(conversationId, () =>
      this.withTicket(conversationId, deadline, work),
    );
  }

  private async withTicket<T>(
    conversationId: string,
    deadline: number,
    work: (lease: LockLease) => Promise<T>,
  ): Promise<T> {
    const keys = this.keys(conversationId);
    const token = randomUUID();
    let handedOver: HandedOver;
    try {
      handedOver = await this.acquire(conversationId, keys, token, deadline);
    } catch (err) {
      // Give back whatever ticket Redis may have issued; not awaited: Redis may be hung.
      void this.release(conversationId, keys, token, NOTHING_LEFT);
      throw err;
    }
    const lease = new TicketLease(handedOver, this.instance, (seen) => this.othersSeen(seen));
    try {
      return await work(lease);
    } finally {
      await this.release(conversationId, keys, token, lease);
    }
  }

  /** Takes the lock; resolves with what the previous holder handed over, if anything. */
  private async acquire(
    conversationId: string,
    keys: Keys,
    token: string,
    deadline: number,
  ): Promise<HandedOver> {
    const lease = this.options.lifetimeMs;
    const issue = (): ReturnType<LockCommands['parleyLockIssue']> =>
      this.redis(() => this.client.parleyLockIssue(...keys.scripts, keys.base, token, lease));
    let woken = this.armWake(conversationId);
    let [n, state, version, recent] = await issue();
    while (state !== 1) {
      if (state === -1) {
        // The ticket expired while waiting (Redis unreachable longer than the lease).
        woken = this.armWake(conversationId);
        [n, state, version, recent] = await issue();
        continue;
      }
      const left = deadline - Date.now();
      if (left <= 0) {
        throw new DialogueError(
          'LOCK.TIMEOUT',
          `Could not acquire the lock of conversation '${conversationId}' within ${this.options.lockTimeoutMs} ms.`,
        );
      }
      await woken.wait(Math.min(left, this.recheckMs));
      woken = this.armWake(conversationId);
      [state, version, recent] = await this.redis(() =>
        this.client.parleyLockCheck(...keys.scripts, keys.base, String(n), token, lease),
      );
    }
    woken.cancel();
    return { version, recent: recent ?? null };
  }

  private async release(
    conversationId: string,
    keys: Keys,
    token: string,
    left: Left,
  ): Promise<void> {
    try {
      await this.client.parleyLockRelease(
        ...keys.scripts,
        keys.base,
        token,
        this.channel,
        conversationId,
        left.version,
        VERSION_TTL_MS,
        left.recent,
        RECENT_TTL_MS,
      );
    } catch (err) {
      // The ticket's lease ends it: until then the conversation stays locked (never unlocked
      // early), which is the safe side.
      this.logError('lock release (the ticket expires with its lease)', err as Error);
    }
  }

  /** Runs a Redis command of the acquisition; any failure is the 503 of a lock store outage. */
  private async redis<R>(command: () => Promise<R>): Promise<R> {
    if (this.closed) throw unavailable('the lock store is shut down');
    try {
      return await command();
    } catch (err) {
      this.logError('lock store', err as Error);
      throw unavailable((err as Error).message);
    }
  }

  /**
   * Standalone and Sentinel: Rasa's key shape. Cluster: the conversation part is a hash tag
   * (`{…}`), so all keys of one conversation live in one slot and each script runs on one node.
   * An id that would end the tag early (a `}`) is tagged by its SHA-1 instead: `{}` would not
   * be a tag at all.
   */
  private keys(conversationId: string): Keys {
    const part = !this.cluster
      ? conversationId
      : conversationId.includes('}')
        ? `{${createHash('sha1').update(conversationId).digest('hex')}}`
        : `{${conversationId}}`;
    const base = `${this.prefix}${part}:`;
    return {
      base,
      scripts: [
        `${base}last_issued_ticket_number`,
        `${base}queue`,
        `${base}version`,
        `${base}recent_events`,
      ],
    };
  }

  /** A wake-up for the conversation's next release, armed before the command that may miss it. */
  private armWake(conversationId: string): Waker {
    let wake!: () => void;
    let timer: NodeJS.Timeout | undefined;
    const set = this.wakers.get(conversationId) ?? new Set<() => void>();
    this.wakers.set(conversationId, set);
    let fired = false;
    const woken = new Promise<void>((resolve) => {
      wake = () => {
        fired = true;
        resolve();
      };
    });
    set.add(wake);
    const cancel = (): void => {
      clearTimeout(timer);
      set.delete(wake);
      if (set.size === 0 && this.wakers.get(conversationId) === set) {
        this.wakers.delete(conversationId);
      }
    };
    return {
      wait: (ms) => {
        if (!fired) timer = setTimeout(wake, ms);
        return woken.finally(cancel);
      },
      cancel,
    };
  }

  private wake(conversationId: string): void {
    for (const wake of this.wakers.get(conversationId) ?? []) wake();
  }

  /** One line per 5 s at most: an outage under load fails every turn. */
  private logError(what: string, err: Error): void {
    const now = Date.now();
    if (now - this.lastErrorLog < 5000) return;
    this.lastErrorLog = now;
    this.logger.warn({ err: err.message }, `${what} failed`);
  }

  async onApplicationShutdown(): Promise<void> {
    this.closed = true;
    await Promise.all([this.client, this.subscriber].map((redis) => close(redis)));
  }
}

interface Keys {
  /** Prefix of the ticket keys (`…:<n>`). */
  readonly base: string;
  /**
   * The scripts' KEYS, in their order: the ticket counter, the queue, the stored version and the
   * recent events the last holder left (see RELEASE).
   */
  readonly scripts: readonly [string, string, string, string];
}

/** What a ticket took over from the previous holder, as Redis kept it. */
interface HandedOver {
  readonly version: string | null;
  readonly recent: string | null;
}

/** What a holder leaves the next one ('' for nothing). */
interface Left {
  readonly version: string;
  readonly recent: string;
}

const NOTHING_LEFT: Left = { version: '', recent: '' };

/**
 * How long after taking over a version another instance stored a store keeps passing events on:
 * while conversations move between instances (a round-robin balancer), every holder passes its
 * turn's events on; a single instance, or instances behind a balancer with sticky sessions,
 * pass none — the next holder is this instance again, with the events cached — and save the
 * window's trip to Redis on every turn. The first move after a quiet spell reads the database.
 */
const OTHERS_WINDOW_MS = 60_000;

/**
 * The lease of one ticket. A version is `generation` and `lastSeq` joined by a space, then a
 * line break and the id of the instance that stored it; recent events are the version they
 * were stored after, a line break, then their JSON array.
 */
class TicketLease implements LockLease, Left {
  readonly lastVersion: StoreVersion | undefined;
  readonly lastEvents: HandedOverEvents | undefined;
  /** Whether `leave` passes events on (see OTHERS_WINDOW_MS). */
  readonly passesEvents: boolean;
  version = '';
  recent = '';

  constructor(
    handedOver: HandedOver,
    private readonly instance: string,
    othersSeen: (seen: boolean) => boolean,
  ) {
    const text = handedOver.version;
    const at = text === null ? -1 : text.indexOf('\n');
    this.lastVersion = decodeVersion(at < 0 ? text : (text as string).slice(0, at));
    this.lastEvents = this.lastVersion === undefined ? undefined : decodeRecent(handedOver.recent);
    // A version without an instance id was stored by an older release: another instance.
    const byOther =
      this.lastVersion !== undefined && (at < 0 || (text as string).slice(at + 1) !== instance);
    this.passesEvents = othersSeen(byOther);
  }

  leave(version: StoreVersion, events?: HandedOverEvents): void {
    this.version = `${encodeVersion(version)}\n${this.instance}`;
    this.recent =
      !this.passesEvents || events === undefined || events.json.length > MAX_RECENT_CHARS
        ? ''
        : `${encodeVersion(events.after)}\n${events.json}`;
  }
}

function encodeVersion(version: StoreVersion): string {
  return `${version.generation} ${version.lastSeq}`;
}

function decodeRecent(text: string | null): HandedOverEvents | undefined {
  if (text === null) return undefined;
  const at = text.indexOf('\n');
  const after = at > 0 ? decodeVersion(text.slice(0, at)) : undefined;
  return after === undefined ? undefined : { after, json: text.slice(at + 1) };
}

function decodeVersion(text: string | null): StoreVersion | undefined {
  if (text === null) return undefined;
  const at = text.lastIndexOf(' ');
  const lastSeq = Number(text.slice(at + 1));
  if (at <= 0 || !Number.isSafeInteger(lastSeq)) return undefined;
  return { generation: text.slice(0, at), lastSeq };
}

interface Waker {
  /** Resolves on a release of the conversation or after `ms`, whichever comes first. */
  wait(ms: number): Promise<void>;
  cancel(): void;
}

function unavailable(reason: string): DialogueError {
  return new DialogueError(
    'LOCK.STORE_UNAVAILABLE',
    `The lock store is unavailable; the request was not carried out. Retry later. (${reason})`,
    { [RETRY_AFTER_DETAIL]: LOCK_STORE_RETRY_AFTER_SECONDS },
  );
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

/** Quits politely when connected (pending releases are sent first), else drops the socket. */
async function close(redis: RedisClient): Promise<void> {
  if (redis.status === 'ready') {
    try {
      await redis.quit();
      return;
    } catch {
      // fall through: drop it
    }
  }
  redis.disconnect();
}
