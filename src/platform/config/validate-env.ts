import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { resolve } from 'node:path';
import {
  DEFAULT_MAX_COMPRESSION_RATIO,
  DEFAULT_MAX_FILE_BYTES,
  DEFAULT_MAX_UNPACKED_BYTES,
} from 'src/core/model-archive';
import { type AppConfig, type JwtMethod, type LogLevel } from './app-config';
import { EnvSchema } from './env.schema';
import { remoteStorageProblems, remoteStorageSettings } from './remote-storage-settings';
import { PARLEY_VERSION } from './version';

/** Thrown when the environment or the CLI flags hold bad values; names every bad key. */
export class ConfigError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(`Invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigError';
  }
}

const REMOTE_STORAGE = /^(aws|gcs|azure|[A-Za-z_][\w-]*(\.[A-Za-z_][\w-]*)*\.[A-Za-z_]\w*)$/;

/** Validates a flat environment (process.env plus CLI overrides) into the typed AppConfig. */
export function validateEnv(env: Record<string, string | undefined>): AppConfig {
  const schema = plainToInstance(EnvSchema, pickSchemaKeys(env));
  const errors = validateSync(schema, { skipMissingProperties: false });
  const problems = errors.flatMap((e) =>
    Object.values(e.constraints ?? {}).map((m) => `${e.property}: ${m}`),
  );
  if (
    schema.PARLEY_REMOTE_STORAGE !== undefined &&
    !REMOTE_STORAGE.test(schema.PARLEY_REMOTE_STORAGE)
  ) {
    problems.push(
      `PARLEY_REMOTE_STORAGE: must be aws, gcs, azure or <module>.<class>, got "${schema.PARLEY_REMOTE_STORAGE}"`,
    );
  }
  const jwtMethod = (schema.JWT_METHOD ?? 'HS256') as JwtMethod;
  if (schema.JWT_METHOD !== undefined && schema.JWT_SECRET === undefined) {
    problems.push('JWT_METHOD: set together with JWT_SECRET (--jwt-secret)');
  }
  problems.push(...remoteStorageProblems(env));
  if (schema.PARLEY_REMOTE_STORAGE !== undefined && schema.PARLEY_MODEL === undefined) {
    problems.push(
      'PARLEY_MODEL: the model name is required (--model) when loading from remote storage',
    );
  }
  if (problems.length > 0) throw new ConfigError(problems);

  return {
    version: PARLEY_VERSION,
    http: {
      host: schema.HOST ?? '0.0.0.0',
      port: schema.PORT ?? 5005,
      enableApi: schema.PARLEY_ENABLE_API ?? false,
      cors: splitList(schema.PARLEY_CORS),
      bodyLimit: schema.PARLEY_BODY_LIMIT ?? '50mb',
      messageBodyLimit: schema.PARLEY_MESSAGE_BODY_LIMIT ?? '64kb',
      trackerBodyLimit: schema.PARLEY_TRACKER_BODY_LIMIT ?? '1mb',
      maxTextLength: schema.PARLEY_MAX_TEXT_LENGTH ?? 10_000,
      responseTimeoutMs: schema.RESPONSE_TIMEOUT_MS ?? 3_600_000,
      keepAliveTimeoutMs: schema.PARLEY_KEEP_ALIVE_TIMEOUT_MS ?? 65_000,
    },
    auth: {
      token: schema.PARLEY_AUTH_TOKEN ?? null,
      jwtSecret: schema.JWT_SECRET ?? null,
      jwtMethod,
    },
    database: {
      url: schema.DATABASE_URL ?? null,
      dataDir: resolve(schema.PARLEY_DATA_DIR ?? '.parley'),
      embeddedPort: schema.EMBEDDED_PG_PORT ?? null,
      poolSize: schema.DATABASE_POOL_SIZE ?? 20,
      queryTimeoutMs: schema.DATABASE_QUERY_TIMEOUT_MS ?? 0,
    },
    lockStore: {
      type: (schema.LOCK_STORE ?? 'memory') as 'memory' | 'postgres',
      lockTimeoutMs: schema.LOCK_TIMEOUT_MS ?? 60_000,
      lifetimeSeconds: schema.TICKET_LOCK_LIFETIME ?? 60,
    },
    reminders: {
      pollMs: schema.REMINDER_POLL_MS ?? 250,
      leaseMs: schema.REMINDER_LEASE_MS ?? 30_000,
    },
    files: {
      credentials: schema.PARLEY_CREDENTIALS ?? null,
      endpoints: schema.PARLEY_ENDPOINTS ?? null,
      model: schema.PARLEY_MODEL ?? 'models',
      domain: schema.PARLEY_DOMAIN ?? null,
      remoteStorage: schema.PARLEY_REMOTE_STORAGE ?? null,
    },
    trackerCacheSize: schema.TRACKER_CACHE_SIZE ?? 1000,
    trackerCacheBytes: (schema.TRACKER_CACHE_MB ?? 256) * 1024 * 1024,
    dialogue: {
      maxPredictions: schema.MAX_NUMBER_OF_PREDICTIONS ?? 10,
      actionTimeoutMs: schema.ACTION_SERVER_TIMEOUT_MS ?? 10_000,
      actionCircuit:
        schema.ACTION_SERVER_CIRCUIT_BREAKER === false
          ? null
          : {
              failureRatio: 0.5,
              minimumCalls: schema.ACTION_SERVER_CIRCUIT_MIN_CALLS ?? 10,
              windowMs: schema.ACTION_SERVER_CIRCUIT_WINDOW_MS ?? 10_000,
              halfOpenAfterMs: schema.ACTION_SERVER_CIRCUIT_HALF_OPEN_MS ?? 30_000,
            },
    },
    idempotency: {
      retentionMs: (schema.IDEMPOTENCY_RETENTION_SECONDS ?? 86_400) * 1000,
    },
    rateLimit: {
      redisUrl: schema.REDIS_URL ?? null,
      perClient: schema.RATE_LIMIT_CLIENT ?? 0,
      perConversation: schema.RATE_LIMIT_CONVERSATION ?? 0,
      windowMs: schema.RATE_LIMIT_WINDOW_MS ?? 60_000,
      prefix: schema.RATE_LIMIT_PREFIX ?? 'parley:rl:',
    },
    trustProxy: trustProxyOf(schema.TRUST_PROXY),
    operations: {
      metricsToken: schema.PARLEY_METRICS_TOKEN ?? null,
      shutdownTimeoutMs: schema.PARLEY_SHUTDOWN_TIMEOUT_MS ?? 25_000,
      shutdownDelayMs: schema.PARLEY_SHUTDOWN_DELAY_MS ?? 0,
      readyRequiresModel: schema.PARLEY_READY_REQUIRES_MODEL ?? false,
    },
    inspect: schema.PARLEY_INSPECT ?? false,
    logLevel: (schema.LOG_LEVEL ?? 'info') as LogLevel,
    logRequests: schema.LOG_REQUESTS ?? false,
    license: schema.PARLEY_LICENSE ?? null,
    speechKeys: {
      deepgram: schema.DEEPGRAM_API_KEY ?? null,
      azureKey: schema.AZURE_SPEECH_API_KEY || schema.AZURE_SPEECH_KEY || null,
      azureRegion: schema.AZURE_SPEECH_REGION ?? null,
      cartesia: schema.CARTESIA_API_KEY ?? null,
    },
    oidc: {
      issuerUrl: schema.OIDC_ISSUER_URL ?? null,
      jwksUri: schema.OIDC_JWKS_URI ?? null,
      audience: schema.OIDC_AUDIENCE ?? null,
      role: schema.OIDC_ROLE ?? 'Manage Conversations',
      roleClients: splitList(schema.OIDC_ROLE_CLIENTS),
      embedded: schema.OIDC_EMBEDDED ?? true,
      embeddedPort: schema.OIDC_EMBEDDED_PORT ?? 8081,
      realm: schema.OIDC_REALM ?? 'parley',
      realmFile: resolve(schema.OIDC_REALM_FILE ?? 'keycloak/parley-realm.json'),
    },
    graphql: {
      maxLimit: schema.GRAPHQL_MAX_LIMIT ?? 100,
      maxDeleteIds: schema.GRAPHQL_MAX_DELETE_IDS ?? 1000,
      introspection: schema.GRAPHQL_INTROSPECTION ?? env.NODE_ENV !== 'production',
      ide: schema.GRAPHQL_IDE ?? env.NODE_ENV !== 'production',
      maxDepth: schema.GRAPHQL_MAX_DEPTH ?? 10,
      maxComplexity: schema.GRAPHQL_MAX_COMPLEXITY ?? 5000,
      maxEvents: schema.GRAPHQL_MAX_EVENTS ?? 10_000,
      maxAnswerBytes: schema.GRAPHQL_MAX_ANSWER_BYTES ?? 16 * 1024 * 1024,
      maxRootFields: schema.GRAPHQL_MAX_ROOT_FIELDS ?? 20,
      maxQueryBytes: schema.GRAPHQL_MAX_QUERY_BYTES ?? 32 * 1024,
    },
    remoteStorage: remoteStorageSettings(env),
    serveModels: schema.PARLEY_SERVE_MODELS ?? false,
    projectDir: resolve(schema.PARLEY_PROJECT_DIR ?? '.'),
    modelArchive: {
      maxFileBytes: schema.PARLEY_MODEL_MAX_FILE_BYTES ?? DEFAULT_MAX_FILE_BYTES,
      maxUnpackedBytes: schema.PARLEY_MODEL_MAX_UNPACKED_BYTES ?? DEFAULT_MAX_UNPACKED_BYTES,
      maxCompressionRatio:
        schema.PARLEY_MODEL_MAX_COMPRESSION_RATIO ?? DEFAULT_MAX_COMPRESSION_RATIO,
    },
  };
}

function pickSchemaKeys(env: Record<string, string | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const key of ENV_KEYS) {
    const value = env[key];
    if (value !== undefined && value !== '') out[key] = value;
  }
  return out;
}

/** `TRUST_PROXY`: true/false, a hop count, or addresses/subnets as Express reads them. */
function trustProxyOf(value: string | undefined): boolean | number | string {
  if (value === undefined) return false;
  const v = value.trim().toLowerCase();
  if (v === 'true') return true;
  if (v === 'false' || v === '') return false;
  if (/^\d+$/.test(v)) return Number(v);
  return value.trim();
}

function splitList(value: string | undefined): string[] {
  if (value === undefined) return [];
  return value
    .split(/[\s,]+/)
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

/** Every variable of EnvSchema, for .env.example and the README table. */
export const ENV_KEYS = [
  'HOST',
  'PORT',
  'PARLEY_ENABLE_API',
  'PARLEY_CORS',
  'PARLEY_BODY_LIMIT',
  'PARLEY_MESSAGE_BODY_LIMIT',
  'PARLEY_TRACKER_BODY_LIMIT',
  'PARLEY_MAX_TEXT_LENGTH',
  'RESPONSE_TIMEOUT_MS',
  'PARLEY_KEEP_ALIVE_TIMEOUT_MS',
  'PARLEY_METRICS_TOKEN',
  'PARLEY_SHUTDOWN_TIMEOUT_MS',
  'PARLEY_SHUTDOWN_DELAY_MS',
  'PARLEY_READY_REQUIRES_MODEL',
  'PARLEY_AUTH_TOKEN',
  'JWT_SECRET',
  'JWT_METHOD',
  'DATABASE_URL',
  'PARLEY_DATA_DIR',
  'EMBEDDED_PG_PORT',
  'DATABASE_POOL_SIZE',
  'DATABASE_QUERY_TIMEOUT_MS',
  'LOCK_STORE',
  'LOCK_TIMEOUT_MS',
  'REMINDER_POLL_MS',
  'REMINDER_LEASE_MS',
  'TICKET_LOCK_LIFETIME',
  'TRACKER_CACHE_SIZE',
  'TRACKER_CACHE_MB',
  'MAX_NUMBER_OF_PREDICTIONS',
  'ACTION_SERVER_TIMEOUT_MS',
  'ACTION_SERVER_CIRCUIT_BREAKER',
  'ACTION_SERVER_CIRCUIT_MIN_CALLS',
  'ACTION_SERVER_CIRCUIT_WINDOW_MS',
  'ACTION_SERVER_CIRCUIT_HALF_OPEN_MS',
  'IDEMPOTENCY_RETENTION_SECONDS',
  'REDIS_URL',
  'RATE_LIMIT_CLIENT',
  'RATE_LIMIT_CONVERSATION',
  'RATE_LIMIT_WINDOW_MS',
  'RATE_LIMIT_PREFIX',
  'TRUST_PROXY',
  'PARLEY_CREDENTIALS',
  'PARLEY_ENDPOINTS',
  'PARLEY_MODEL',
  'PARLEY_DOMAIN',
  'PARLEY_REMOTE_STORAGE',
  'PARLEY_INSPECT',
  'LOG_LEVEL',
  'LOG_REQUESTS',
  'PARLEY_LICENSE',
  'DEEPGRAM_API_KEY',
  'AZURE_SPEECH_API_KEY',
  'AZURE_SPEECH_KEY',
  'AZURE_SPEECH_REGION',
  'CARTESIA_API_KEY',
  'OIDC_ISSUER_URL',
  'OIDC_JWKS_URI',
  'OIDC_AUDIENCE',
  'OIDC_ROLE',
  'OIDC_ROLE_CLIENTS',
  'OIDC_EMBEDDED',
  'OIDC_EMBEDDED_PORT',
  'OIDC_REALM',
  'OIDC_REALM_FILE',
  'GRAPHQL_MAX_LIMIT',
  'GRAPHQL_MAX_DELETE_IDS',
  'GRAPHQL_INTROSPECTION',
  'GRAPHQL_IDE',
  'GRAPHQL_MAX_DEPTH',
  'GRAPHQL_MAX_COMPLEXITY',
  'GRAPHQL_MAX_EVENTS',
  'GRAPHQL_MAX_ANSWER_BYTES',
  'GRAPHQL_MAX_ROOT_FIELDS',
  'GRAPHQL_MAX_QUERY_BYTES',
  'PARLEY_SERVE_MODELS',
  'PARLEY_PROJECT_DIR',
  'PARLEY_MODEL_MAX_FILE_BYTES',
  'PARLEY_MODEL_MAX_UNPACKED_BYTES',
  'PARLEY_MODEL_MAX_COMPRESSION_RATIO',
] as const;
