import { Transform } from 'class-transformer';
import {
  IsBoolean,
  IsIn,
  IsInt,
  IsJWT,
  IsOptional,
  IsString,
  Matches,
  Max,
  MaxLength,
  Min,
  MinLength,
} from 'class-validator';
import { JWT_METHODS, LOG_LEVELS } from './app-config';

const toBool = ({ value }: { value: unknown }): unknown => {
  if (typeof value !== 'string') return value;
  const v = value.trim().toLowerCase();
  if (['true', '1', 'yes', 'on'].includes(v)) return true;
  if (['false', '0', 'no', 'off', ''].includes(v)) return false;
  return value;
};
const toInt = ({ value }: { value: unknown }): unknown =>
  typeof value === 'string' && /^-?\d+$/.test(value.trim()) ? Number(value.trim()) : value;

/**
 * Every environment variable Parley reads, validated once at start. CLI flags are mapped onto
 * these names before validation, so both paths share one set of rules.
 */
export class EnvSchema {
  @IsOptional() @IsString() HOST?: string;

  @IsOptional() @Transform(toInt) @IsInt() @Min(0) @Max(65535) PORT?: number;

  @IsOptional() @Transform(toBool) @IsBoolean() PARLEY_ENABLE_API?: boolean;

  @IsOptional() @IsString() PARLEY_CORS?: string;

  @IsOptional()
  @Matches(/^\d+(b|kb|mb)?$/i, {
    message: 'PARLEY_BODY_LIMIT must look like 10mb, 512kb or 1048576',
  })
  PARLEY_BODY_LIMIT?: string;

  @IsOptional()
  @Matches(/^\d+(b|kb|mb)?$/i, {
    message: 'PARLEY_MESSAGE_BODY_LIMIT must look like 1mb, 512kb or 1048576',
  })
  PARLEY_MESSAGE_BODY_LIMIT?: string;

  @IsOptional()
  @Matches(/^\d+(b|kb|mb)?$/i, {
    message: 'PARLEY_TRACKER_BODY_LIMIT must look like 1mb, 512kb or 1048576',
  })
  PARLEY_TRACKER_BODY_LIMIT?: string;

  @IsOptional() @Transform(toInt) @IsInt() @Min(1) @Max(1_000_000) PARLEY_MAX_TEXT_LENGTH?: number;

  @IsOptional() @Transform(toInt) @IsInt() @Min(1000) RESPONSE_TIMEOUT_MS?: number;

  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(1000)
  @Max(3_600_000)
  PARLEY_KEEP_ALIVE_TIMEOUT_MS?: number;

  @IsOptional() @IsString() @MinLength(16) @MaxLength(4096) PARLEY_METRICS_TOKEN?: string;

  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(1000)
  @Max(600_000)
  PARLEY_SHUTDOWN_TIMEOUT_MS?: number;

  @IsOptional() @Transform(toInt) @IsInt() @Min(0) @Max(120_000) PARLEY_SHUTDOWN_DELAY_MS?: number;

  @IsOptional() @Transform(toBool) @IsBoolean() PARLEY_READY_REQUIRES_MODEL?: boolean;

  @IsOptional() @IsString() @MinLength(1) PARLEY_AUTH_TOKEN?: string;

  @IsOptional() @IsString() @MinLength(1) JWT_SECRET?: string;

  @IsOptional() @IsIn(JWT_METHODS) JWT_METHOD?: string;

  @IsOptional()
  @Matches(/^postgres(ql)?:\/\//, {
    message: 'DATABASE_URL must be a postgres:// or postgresql:// URL',
  })
  DATABASE_URL?: string;

  @IsOptional() @IsString() @MaxLength(4096) PARLEY_DATA_DIR?: string;

  @IsOptional() @Transform(toInt) @IsInt() @Min(1) @Max(65535) EMBEDDED_PG_PORT?: number;

  @IsOptional() @Transform(toInt) @IsInt() @Min(2) @Max(500) DATABASE_POOL_SIZE?: number;

  @IsOptional() @Transform(toInt) @IsInt() @Min(0) DATABASE_QUERY_TIMEOUT_MS?: number;

  @IsOptional() @IsIn(['memory', 'postgres']) LOCK_STORE?: string;

  @IsOptional() @Transform(toInt) @IsInt() @Min(100) LOCK_TIMEOUT_MS?: number;

  @IsOptional() @Transform(toInt) @IsInt() @Min(10) @Max(60_000) REMINDER_POLL_MS?: number;

  @IsOptional() @Transform(toInt) @IsInt() @Min(1_000) @Max(86_400_000) REMINDER_LEASE_MS?: number;
  @IsOptional() @Transform(toInt) @IsInt() @Min(1) @Max(86_400) TICKET_LOCK_LIFETIME?: number;

  @IsOptional() @Transform(toInt) @IsInt() @Min(0) @Max(10_000_000) TRACKER_CACHE_SIZE?: number;

  @IsOptional() @Transform(toInt) @IsInt() @Min(1) @Max(1_000_000) TRACKER_CACHE_MB?: number;

  @IsOptional() @Transform(toInt) @IsInt() @Min(1) @Max(10_000) MAX_NUMBER_OF_PREDICTIONS?: number;

  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(86_400_000)
  ACTION_SERVER_TIMEOUT_MS?: number;

  /** The action server's circuit breaker (on by default). */
  @IsOptional() @Transform(toBool) @IsBoolean() ACTION_SERVER_CIRCUIT_BREAKER?: boolean;

  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(1_000_000)
  ACTION_SERVER_CIRCUIT_MIN_CALLS?: number;

  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(100)
  @Max(3_600_000)
  ACTION_SERVER_CIRCUIT_WINDOW_MS?: number;

  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(10)
  @Max(3_600_000)
  ACTION_SERVER_CIRCUIT_HALF_OPEN_MS?: number;

  /** How long an idempotency key and its stored answer are kept, in seconds (default 24 h). */
  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(31_536_000)
  IDEMPOTENCY_RETENTION_SECONDS?: number;

  /** Rate limits: Redis of the shared counters; unset → in-memory counters (one instance). */
  @IsOptional()
  @Matches(/^rediss?:\/\//, { message: 'REDIS_URL must be a redis:// or rediss:// URL' })
  REDIS_URL?: string;

  /** Requests per client (IP, or token subject) per RATE_LIMIT_WINDOW_MS; 0: no limit. */
  @IsOptional() @Transform(toInt) @IsInt() @Min(0) @Max(100_000_000) RATE_LIMIT_CLIENT?: number;

  /** Messages per conversation (sender id) per RATE_LIMIT_WINDOW_MS; 0: no limit. */
  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(0)
  @Max(100_000_000)
  RATE_LIMIT_CONVERSATION?: number;

  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(100)
  @Max(86_400_000)
  RATE_LIMIT_WINDOW_MS?: number;

  /** Prefix of the rate limiter's Redis keys (instances sharing counters share a prefix). */
  @IsOptional()
  @Matches(/^[A-Za-z0-9:._-]{1,100}$/, {
    message: 'RATE_LIMIT_PREFIX may hold letters, digits, ":", ".", "_" and "-"',
  })
  RATE_LIMIT_PREFIX?: string;

  /** Express `trust proxy`: false, true, a hop count or a list of addresses/subnets. */
  @IsOptional() @IsString() @MaxLength(1000) TRUST_PROXY?: string;

  @IsOptional() @IsString() PARLEY_CREDENTIALS?: string;

  @IsOptional() @IsString() PARLEY_ENDPOINTS?: string;

  @IsOptional() @IsString() PARLEY_MODEL?: string;

  @IsOptional() @IsString() PARLEY_DOMAIN?: string;

  @IsOptional() @IsString() PARLEY_REMOTE_STORAGE?: string;

  @IsOptional() @Transform(toBool) @IsBoolean() PARLEY_INSPECT?: boolean;

  @IsOptional() @IsIn(LOG_LEVELS) LOG_LEVEL?: string;

  @IsOptional() @Transform(toBool) @IsBoolean() LOG_REQUESTS?: boolean;

  @IsOptional() @IsJWT() PARLEY_LICENSE?: string;

  /** Deepgram API key for the voice connector's `deepgram` TTS engine. */
  @IsOptional() @IsString() DEEPGRAM_API_KEY?: string;

  /** Azure Speech key and region for the voice connector's `azure` ASR/TTS engines. */
  /** Azure Speech key under Rasa's name; `AZURE_SPEECH_KEY` is accepted too. */
  @IsOptional() @IsString() AZURE_SPEECH_API_KEY?: string;
  @IsOptional() @IsString() AZURE_SPEECH_KEY?: string;

  @IsOptional()
  @Matches(/^[a-z0-9]+$/, { message: 'AZURE_SPEECH_REGION must be a region name like eastus' })
  AZURE_SPEECH_REGION?: string;

  /** Cartesia API key for the voice connector's `cartesia` TTS engine. */
  @IsOptional() @IsString() CARTESIA_API_KEY?: string;

  @IsOptional()
  @Matches(/^https?:\/\/\S+[^/]$/, {
    message: 'OIDC_ISSUER_URL must be an http(s) URL without a trailing slash',
  })
  OIDC_ISSUER_URL?: string;

  @IsOptional()
  @Matches(/^https?:\/\/\S+$/, { message: 'OIDC_JWKS_URI must be an http(s) URL' })
  OIDC_JWKS_URI?: string;

  @IsOptional() @IsString() @MinLength(1) OIDC_AUDIENCE?: string;

  @IsOptional() @IsString() @MinLength(1) OIDC_ROLE?: string;

  @IsOptional() @IsString() OIDC_ROLE_CLIENTS?: string;

  @IsOptional() @Transform(toBool) @IsBoolean() OIDC_EMBEDDED?: boolean;

  @IsOptional() @Transform(toInt) @IsInt() @Min(0) @Max(65535) OIDC_EMBEDDED_PORT?: number;

  @IsOptional()
  @Matches(/^[A-Za-z0-9._-]+$/, {
    message: 'OIDC_REALM may hold letters, digits, ".", "_" and "-"',
  })
  OIDC_REALM?: string;

  @IsOptional() @IsString() @MinLength(1) OIDC_REALM_FILE?: string;

  @IsOptional() @Transform(toInt) @IsInt() @Min(1) @Max(10_000) GRAPHQL_MAX_LIMIT?: number;

  @IsOptional() @Transform(toInt) @IsInt() @Min(1) @Max(100_000) GRAPHQL_MAX_DELETE_IDS?: number;

  @IsOptional() @Transform(toBool) @IsBoolean() GRAPHQL_INTROSPECTION?: boolean;

  @IsOptional() @Transform(toBool) @IsBoolean() GRAPHQL_IDE?: boolean;

  @IsOptional() @Transform(toInt) @IsInt() @Min(2) @Max(100) GRAPHQL_MAX_DEPTH?: number;

  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(10)
  @Max(10_000_000)
  GRAPHQL_MAX_COMPLEXITY?: number;

  @IsOptional() @Transform(toInt) @IsInt() @Min(1) @Max(10_000_000) GRAPHQL_MAX_EVENTS?: number;

  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(1024)
  @Max(1_073_741_824)
  GRAPHQL_MAX_ANSWER_BYTES?: number;

  @IsOptional() @Transform(toInt) @IsInt() @Min(1) @Max(1000) GRAPHQL_MAX_ROOT_FIELDS?: number;

  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(256)
  @Max(10_485_760)
  GRAPHQL_MAX_QUERY_BYTES?: number;

  @IsOptional() @Transform(toBool) @IsBoolean() PARLEY_SERVE_MODELS?: boolean;

  @IsOptional() @IsString() PARLEY_PROJECT_DIR?: string;

  /** Largest member of a model archive once unpacked, in bytes. */
  @IsOptional() @Transform(toInt) @IsInt() @Min(1024) PARLEY_MODEL_MAX_FILE_BYTES?: number;

  /** Largest sum of the members of a model archive once unpacked, in bytes. */
  @IsOptional() @Transform(toInt) @IsInt() @Min(1024) PARLEY_MODEL_MAX_UNPACKED_BYTES?: number;

  /** Most bytes a model archive may inflate to per compressed byte. */
  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(2)
  @Max(100_000)
  PARLEY_MODEL_MAX_COMPRESSION_RATIO?: number;
}
