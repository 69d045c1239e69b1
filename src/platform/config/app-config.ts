/** The validated, typed configuration of one Parley server process. */
export interface AppConfig {
  readonly version: string;
  readonly http: {
    readonly host: string;
    readonly port: number;
    readonly enableApi: boolean;
    readonly cors: readonly string[];
    readonly bodyLimit: string;
    readonly responseTimeoutMs: number;
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
  };
  readonly lockStore: {
    readonly type: 'memory' | 'postgres';
    readonly lockTimeoutMs: number;
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
  /** Dialogue engine: circuit breaker and custom action server timeout. */
  readonly dialogue: {
    readonly maxPredictions: number;
    readonly actionTimeoutMs: number;
  };
  readonly inspect: boolean;
  readonly logLevel: LogLevel;
  /** License JWT (`PARLEY_LICENSE`) shown by `GET /license`; null for the open-source record. */
  readonly license: string | null;
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
