import { type RemoteStorageSettings } from './remote-storage-settings';

/** The validated, typed configuration of one Parley server process. */
export interface AppConfig {
  readonly version: string;
  readonly http: {
    readonly host: string;
    readonly port: number;
    readonly enableApi: boolean;
    readonly cors: readonly string[];
    /** Body size limit of the training and test data routes (`/model/train`, `/model/test/*`). */
    readonly bodyLimit: string;
    /** Body size limit of the routes that take one user message (webhooks, parse, messages). */
    readonly messageBodyLimit: string;
    /** Body size limit of every other route (tracker events, GraphQL, `PUT /model`, …). */
    readonly trackerBodyLimit: string;
    /** Longest user text (UTF-16 code units) any route or channel accepts; longer → 400. */
    readonly maxTextLength: number;
    readonly responseTimeoutMs: number;
    /**
     * How long an idle keep-alive connection stays open. Above the idle timeout of the load
     * balancers in front (60 s for most), so that they, not Parley, close idle connections:
     * else a request sent on a connection Parley is closing at that moment is lost (a 502).
     */
    readonly keepAliveTimeoutMs: number;
  };
  readonly auth: {
    readonly token: string | null;
    readonly jwtSecret: string | null;
    readonly jwtMethod: JwtMethod;
  };
  readonly database: {
    /** Set when an external PostgreSQL is used; null → the embedded server under dataDir. */
    readonly url: string | null;
    readonly dataDir: string;
    readonly embeddedPort: number | null;
    readonly poolSize: number;
    /**
     * `DATABASE_QUERY_TIMEOUT_MS`: how long the server waits for the answer to one statement
     * before it gives the connection up (the request fails with 503); 0 waits as long as TCP
     * does (a silent network partition: until the link heals).
     */
    readonly queryTimeoutMs: number;
  };
  readonly lockStore: {
    readonly type: 'memory' | 'postgres';
    readonly lockTimeoutMs: number;
    /** `TICKET_LOCK_LIFETIME` (s): the lease of a Redis lock ticket (Rasa's default 60). */
    readonly lifetimeSeconds: number;
  };
  /** Reminders: period of the due-reminder sweep, and how long a claim holds (then re-claimed). */
  readonly reminders: {
    readonly pollMs: number;
    readonly leaseMs: number;
  };
  readonly files: {
    readonly credentials: string | null;
    readonly endpoints: string | null;
    readonly model: string;
    readonly domain: string | null;
    readonly remoteStorage: string | null;
  };
  /** Conversations whose latest session is kept built in memory (0 = no cache). */
  readonly trackerCacheSize: number;
  /** Estimated bytes the tracker cache may hold; least recently used sessions go first. */
  readonly trackerCacheBytes: number;
  /** Dialogue engine: circuit breaker and custom action server timeout. */
  readonly dialogue: {
    readonly maxPredictions: number;
    readonly actionTimeoutMs: number;
    /** The action server's circuit breaker; null: off. */
    readonly actionCircuit: {
      readonly failureRatio: number;
      readonly minimumCalls: number;
      readonly windowMs: number;
      readonly halfOpenAfterMs: number;
    } | null;
  };
  /** Idempotent ingress: how long keys and their stored answers are kept. */
  readonly idempotency: {
    readonly retentionMs: number;
  };
  /** Rate limits of the message routes (0: that limit is off). */
  readonly rateLimit: {
    readonly redisUrl: string | null;
    readonly perClient: number;
    readonly perConversation: number;
    readonly windowMs: number;
    readonly prefix: string;
  };
  /** Express `trust proxy` (which X-Forwarded-For hops give the client's address). */
  readonly trustProxy: boolean | number | string;
  /** Operations: who may scrape `/metrics`, and how SIGTERM drains the server. */
  readonly operations?: OperationsConfig;
  /** The development inspector (`--inspect`): every input channel gets its inspector page. */
  readonly inspect: boolean;
  /**
   * `parley inspect`: the only input channel is this one with its defaults, and no
   * credentials file is read (as `rasa inspect`); absent for `parley run`.
   */
  readonly inspectConnector?: 'socketio';
  readonly logLevel: LogLevel;
  /** One log line per HTTP request at info level; false: at debug (written only at LOG_LEVEL=debug). */
  readonly logRequests: boolean;
  /** License JWT (`PARLEY_LICENSE`) shown by `GET /license`; null for the open-source record. */
  readonly license: string | null;
  /** API keys of cloud speech engines (voice connector); null when not set. */
  readonly speechKeys?: {
    readonly deepgram: string | null;
    readonly azureKey?: string | null;
    readonly azureRegion?: string | null;
    readonly cartesia?: string | null;
  };
  /** OpenID Connect bearer tokens for the GraphQL API (and the embedded identity provider). */
  readonly oidc: OidcConfig;
  /** The conversation-management GraphQL API at /api/graphql. */
  readonly graphql: GraphqlConfig;
  /** Remote model storage settings (BUCKET_NAME, AWS_*, REMOTE_STORAGE_PATH). */
  readonly remoteStorage: RemoteStorageSettings;
  /** `PARLEY_SERVE_MODELS`: act as a model server (`GET /models/<name>`), off by default. */
  readonly serveModels: boolean;
  /** `PARLEY_PROJECT_DIR`: the assistant project root (custom persistors); default the cwd. */
  readonly projectDir: string;
  /**
   * Limits on a model archive while it is read (`PUT /model`, `--model`, model server, remote
   * storage): largest member and sum of members once unpacked, and the compression ratio.
   */
  readonly modelArchive: {
    readonly maxFileBytes: number;
    readonly maxUnpackedBytes: number;
    readonly maxCompressionRatio: number;
  };
}

export interface OperationsConfig {
  /** `PARLEY_METRICS_TOKEN`: bearer token `GET /metrics` requires; null: open, like a Prometheus target. */
  readonly metricsToken: string | null;
  /** `PARLEY_SHUTDOWN_TIMEOUT_MS`: the whole graceful shutdown, after which the process exits anyway. */
  readonly shutdownTimeoutMs: number;
  /**
   * `PARLEY_SHUTDOWN_DELAY_MS`: how long readiness fails before the listener closes (the load
   * balancer's time to take the instance out; Kubernetes' endpoint removal is asynchronous).
   */
  readonly shutdownDelayMs: number;
  /**
   * `PARLEY_READY_REQUIRES_MODEL`: readiness fails while no model is loaded. Off by default,
   * like Rasa, whose server is reachable before a model arrives (`PUT /model`, a model server).
   */
  readonly readyRequiresModel: boolean;
}

/** Operations settings when a hand-built config has none. */
export const DEFAULT_OPERATIONS: OperationsConfig = {
  metricsToken: null,
  shutdownTimeoutMs: 25_000,
  shutdownDelayMs: 0,
  readyRequiresModel: false,
};

export interface OidcConfig {
  /** Exact `iss` of accepted tokens; null → the embedded provider's (when it runs) or none. */
  readonly issuerUrl: string | null;
  /** JWKS URL; null → `<issuer>/protocol/openid-connect/certs` (Keycloak's path). */
  readonly jwksUri: string | null;
  /** Required `aud` (one of); null → the audience is not checked. */
  readonly audience: string | null;
  /** Role every GraphQL operation needs (realm role or client role). */
  readonly role: string;
  /** Clients whose `resource_access.<client>.roles` count; empty → any client's. */
  readonly roleClients: readonly string[];
  /** Start the embedded provider with `parley run` when no issuer is configured. */
  readonly embedded: boolean;
  /** Port of the embedded provider (0 = a free one). */
  readonly embeddedPort: number;
  /** Realm of the embedded provider (paths `/auth/realms/<realm>/…`). */
  readonly realm: string;
  /** Keycloak realm export the embedded provider reads clients, secrets and roles from. */
  readonly realmFile: string;
}

export interface GraphqlConfig {
  /** Largest `limit` of rawConversations; more → BAD_USER_INPUT. */
  readonly maxLimit: number;
  /** Most conversation ids per deleteConversations; more → BAD_USER_INPUT. */
  readonly maxDeleteIds: number;
  /** Schema introspection; off by default when NODE_ENV is production. */
  readonly introspection: boolean;
  /** Serve the GraphiQL page at GET /api/graphql. */
  readonly ide: boolean;
  readonly maxDepth: number;
  readonly maxComplexity: number;
  /** Most conversation events one answer may hold (all root fields together). */
  readonly maxEvents: number;
  /** Most bytes of stored event JSON one answer may hold (all root fields together). */
  readonly maxAnswerBytes: number;
  /** Most root fields (aliases each count) one operation may select. */
  readonly maxRootFields: number;
  /** Longest query document, in UTF-8 bytes. */
  readonly maxQueryBytes: number;
}

export const JWT_METHODS = [
  'HS256',
  'HS384',
  'HS512',
  'RS256',
  'RS384',
  'RS512',
  'ES256',
  'ES384',
  'ES512',
  'PS256',
  'PS384',
  'PS512',
] as const;
export type JwtMethod = (typeof JWT_METHODS)[number];

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** DI token for the AppConfig value. */
export const APP_CONFIG = Symbol('APP_CONFIG');
