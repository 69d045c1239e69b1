import { DialogueError, parseAnonymizationConfig, type AnonymizationRuleList } from 'src/core';

/** One destination of anonymised copies: a queue (pika) or topic (kafka) and its rule list. */
export interface AnonymizedDestination {
  readonly name: string;
  readonly rules: AnonymizationRuleList;
}

/**
 * Rasa Pro's PII keys of a pika/kafka broker: `stream_pii: false` keeps the original events
 * off the normal destinations; `anonymization_queues` / `anonymization_topics` receive
 * copies with the rule list of `anonymization:` applied.
 */
export interface PiiRouting {
  readonly streamPii: boolean;
  readonly anonymized: readonly AnonymizedDestination[];
}

/** `event_broker: type: pika` (RabbitMQ), in Rasa's keys. */
export interface PikaBrokerConfig {
  readonly type: 'pika';
  /** amqp(s):// URL with the credentials: `url`/`host`, `port`, `username`, `password`. */
  readonly url: string;
  /** The URL without the password, for logs. */
  readonly safeUrl: string;
  readonly exchangeName: string;
  readonly queues: readonly string[];
  readonly connectionAttempts: number;
  readonly retryDelaySeconds: number;
  readonly raiseOnFailure: boolean;
  readonly pii: PiiRouting;
}

export type KafkaMechanism = 'plain' | 'scram-sha-256' | 'scram-sha-512';

/** `event_broker: type: kafka`, in Rasa's keys. */
export interface KafkaBrokerConfig {
  readonly type: 'kafka';
  readonly brokers: readonly string[];
  readonly topic: string;
  readonly clientId: string;
  readonly partitionBySender: boolean;
  readonly securityProtocol: 'PLAINTEXT' | 'SASL_PLAINTEXT' | 'SSL' | 'SASL_SSL';
  readonly sasl: {
    readonly mechanism: KafkaMechanism;
    readonly username: string;
    readonly password: string;
  } | null;
  readonly ssl: {
    readonly cafile: string | null;
    readonly certfile: string | null;
    readonly keyfile: string | null;
    readonly checkHostname: boolean;
  };
  readonly pii: PiiRouting;
}

/** `event_broker: type: sql`: Rasa's `events(id, sender_id, data)` table, on PostgreSQL. */
export interface SqlBrokerConfig {
  readonly type: 'sql';
  readonly url: string;
  readonly safeUrl: string;
}

export type EventBrokerConfig = PikaBrokerConfig | KafkaBrokerConfig | SqlBrokerConfig;

export const SUPPORTED_BROKERS = ['pika', 'kafka', 'sql'] as const;

const KAFKA_PROTOCOLS = ['PLAINTEXT', 'SASL_PLAINTEXT', 'SSL', 'SASL_SSL'] as const;
const KAFKA_MECHANISMS = {
  PLAIN: 'plain',
  'SCRAM-SHA-256': 'scram-sha-256',
  'SCRAM-SHA-512': 'scram-sha-512',
} as const;

class Reader {
  constructor(
    readonly where: string,
    readonly e: Record<string, unknown>,
    /** The `anonymization` entry of the same file (rule lists), validated. */
    readonly ruleLists: readonly AnonymizationRuleList[] | null = null,
  ) {}

  fail(message: string): never {
    throw new DialogueError('CONFIG.INVALID', `${this.where}: ${message}`);
  }

  string(key: string): string | null {
    const v = this.e[key];
    if (v === undefined || v === null || v === '') return null;
    if (typeof v === 'string') return v;
    if (typeof v === 'number') return String(v);
    return this.fail(`'${key}' must be a string`);
  }

  number(key: string, fallback: number, min = 0, max = Number.MAX_SAFE_INTEGER): number {
    const v = this.e[key];
    if (v === undefined || v === null || v === '') return fallback;
    const n = typeof v === 'number' ? v : typeof v === 'string' ? Number(v) : Number.NaN;
    if (!Number.isFinite(n) || n < min || n > max) {
      return this.fail(
        `'${key}' must be a number from ${min} to ${max} (got ${JSON.stringify(v)})`,
      );
    }
    return n;
  }

  boolean(key: string, fallback: boolean): boolean {
    const v = this.e[key];
    if (v === undefined || v === null) return fallback;
    if (typeof v === 'boolean') return v;
    if (v === 'true' || v === 'True') return true;
    if (v === 'false' || v === 'False') return false;
    return this.fail(`'${key}' must be true or false`);
  }

  strings(key: string): string[] | null {
    const v = this.e[key];
    if (v === undefined || v === null) return null;
    const list = Array.isArray(v) ? v : [v];
    if (list.length === 0 || !list.every((x) => typeof x === 'string' && x !== '')) {
      return this.fail(`'${key}' must be a non-empty string or list of strings`);
    }
    return list as string[];
  }
}

/** user:password@ in a URL, percent-encoded. */
function withCredentials(url: URL, username: string | null, password: string | null): void {
  if (username !== null && url.username === '') url.username = encodeURIComponent(username);
  if (password !== null && url.password === '') url.password = encodeURIComponent(password);
}

function safe(url: URL): string {
  const copy = new URL(url.toString());
  if (copy.password !== '') copy.password = '***';
  return copy.toString();
}

/**
 * `stream_pii` and the anonymised destinations (`anonymization_queues` for pika,
 * `anonymization_topics` for kafka): a list of `{name, anonymization_rules: <rule list id>}`
 * (Rasa Pro 3.6–3.12) or of names (3.13+), a bare name taking the only rule list there is.
 */
function piiOf(r: Reader, key: 'anonymization_queues' | 'anonymization_topics'): PiiRouting {
  const other = key === 'anonymization_queues' ? 'anonymization_topics' : 'anonymization_queues';
  if (r.e[other] !== undefined && r.e[other] !== null) {
    r.fail(`'${other}' is not a key of this broker type; use '${key}'`);
  }
  const streamPii = r.boolean('stream_pii', true);
  const raw = r.e[key];
  if (raw === undefined || raw === null) return { streamPii, anonymized: [] };
  if (!Array.isArray(raw) || raw.length === 0) {
    return r.fail(`'${key}' must be a non-empty list of {name, anonymization_rules}`);
  }
  const lists = r.ruleLists;
  const names = new Set<string>();
  const anonymized = raw.map((item: unknown, i): AnonymizedDestination => {
    const at = `'${key}[${i}]'`;
    let name: unknown;
    let ruleId: unknown;
    if (typeof item === 'string') {
      name = item;
      if (lists !== null && lists.length !== 1) {
        r.fail(
          `${at} names no 'anonymization_rules' and anonymization has ${lists.length} rule lists: write {name, anonymization_rules}`,
        );
      }
      ruleId = lists?.[0]?.id;
    } else if (typeof item === 'object' && item !== null && !Array.isArray(item)) {
      name = (item as Record<string, unknown>).name;
      ruleId = (item as Record<string, unknown>).anonymization_rules;
    } else {
      return r.fail(`${at} must be {name, anonymization_rules} or a name`);
    }
    if (typeof name !== 'string' || name === '') r.fail(`${at}.name must be a non-empty string`);
    if (names.has(name)) r.fail(`${at}.name '${name}' is listed twice`);
    names.add(name);
    if (lists === null) {
      return r.fail(`${at} needs the 'anonymization' entry of endpoints.yml (rule_lists)`);
    }
    const rules = lists.find((l) => l.id === ruleId);
    if (rules === undefined) {
      return r.fail(
        `${at}.anonymization_rules '${String(ruleId)}' is not a rule list id of 'anonymization' (ids: ${lists.map((l) => l.id).join(', ')})`,
      );
    }
    return { name, rules };
  });
  return { streamPii, anonymized };
}

function pikaOf(r: Reader): PikaBrokerConfig {
  const host = r.string('url') ?? r.string('host');
  if (host === null) return r.fail("type pika needs 'url' (or 'host'): the RabbitMQ host");
  const port = r.number('port', 5672, 1, 65535);
  let url: URL;
  try {
    url = /^amqps?:\/\//.test(host) ? new URL(host) : new URL(`amqp://${host}`);
  } catch {
    return r.fail(`'url' is not a host name or amqp(s):// URL: ${host}`);
  }
  if (url.port === '' && !/^amqps?:\/\//.test(host)) url.port = String(port);
  withCredentials(url, r.string('username'), r.string('password'));
  const queues = r.strings('queues') ?? r.strings('queue') ?? ['rasa_core_events'];
  return {
    type: 'pika',
    url: url.toString(),
    safeUrl: safe(url),
    exchangeName: r.string('exchange_name') ?? 'rasa-exchange',
    queues,
    connectionAttempts: r.number('connection_attempts', 20, 1, 1000),
    retryDelaySeconds: r.number('retry_delay_in_seconds', 5, 0, 3600),
    raiseOnFailure: r.boolean('raise_on_failure', false),
    pii: piiOf(r, 'anonymization_queues'),
  };
}

function kafkaOf(r: Reader): KafkaBrokerConfig {
  const urls = r.strings('url');
  if (urls === null) return r.fail("type kafka needs 'url': the bootstrap server(s), host:port");
  const brokers = urls
    .flatMap((u) => u.split(','))
    .map((u) => u.trim())
    .filter((u) => u !== '');
  for (const b of brokers) {
    if (!/^[A-Za-z0-9._\-[\]:]+:\d{1,5}$/.test(b)) r.fail(`'url' entry is not host:port: ${b}`);
  }
  const username = r.string('sasl_username');
  const password = r.string('sasl_password');
  const protocolText = (
    r.string('security_protocol') ?? (username ? 'SASL_PLAINTEXT' : 'PLAINTEXT')
  ).toUpperCase();
  if (!(KAFKA_PROTOCOLS as readonly string[]).includes(protocolText)) {
    r.fail(`security_protocol '${protocolText}' is not one of ${KAFKA_PROTOCOLS.join(', ')}`);
  }
  const protocol = protocolText as KafkaBrokerConfig['securityProtocol'];
  let sasl: KafkaBrokerConfig['sasl'] = null;
  if (protocol === 'SASL_PLAINTEXT' || protocol === 'SASL_SSL') {
    const name = (r.string('sasl_mechanism') ?? 'PLAIN').toUpperCase();
    const mechanism = (KAFKA_MECHANISMS as Record<string, KafkaMechanism | undefined>)[name];
    if (mechanism === undefined) {
      r.fail(
        `sasl_mechanism '${name}' is not supported (supported: ${Object.keys(KAFKA_MECHANISMS).join(', ')})`,
      );
    }
    if (username === null || password === null) {
      r.fail(`security_protocol ${protocol} needs 'sasl_username' and 'sasl_password'`);
    }
    sasl = { mechanism, username, password };
  }
  return {
    type: 'kafka',
    brokers,
    topic: r.string('topic') ?? 'rasa_core_events',
    clientId: r.string('client_id') ?? 'parley',
    partitionBySender: r.boolean('partition_by_sender', true),
    securityProtocol: protocol,
    sasl,
    ssl: {
      cafile: r.string('ssl_cafile'),
      certfile: r.string('ssl_certfile'),
      keyfile: r.string('ssl_keyfile'),
      checkHostname: r.boolean('ssl_check_hostname', true),
    },
    pii: piiOf(r, 'anonymization_topics'),
  };
}

function sqlOf(r: Reader): SqlBrokerConfig {
  for (const key of ['stream_pii', 'anonymization_queues', 'anonymization_topics']) {
    if (r.e[key] !== undefined && r.e[key] !== null) {
      r.fail(`'${key}' is supported by the pika and kafka brokers only, not by type sql`);
    }
  }
  const dialect = (r.string('dialect') ?? 'sqlite').toLowerCase();
  if (!['postgresql', 'postgres', 'postgresql+psycopg2'].includes(dialect)) {
    r.fail(`type sql: dialect '${dialect}' is not supported by Parley (supported: postgresql)`);
  }
  const host = r.string('url') ?? r.string('host');
  const db = r.string('db');
  if (host === null || db === null) r.fail("type sql needs 'url' (or 'host') and 'db'");
  let url: URL;
  try {
    url = /^postgres(ql)?:\/\//.test(host) ? new URL(host) : new URL(`postgres://${host}`);
  } catch {
    return r.fail(`'url' is not a host name or postgres:// URL: ${host}`);
  }
  if (url.port === '') url.port = String(r.number('port', 5432, 1, 65535));
  url.pathname = `/${encodeURIComponent(db)}`;
  withCredentials(url, r.string('username'), r.string('password'));
  return { type: 'sql', url: url.toString(), safeUrl: safe(url) };
}

/**
 * The `event_broker` entry of endpoints.yml, validated: null when absent; a start-up error
 * (CONFIG.INVALID, naming the file and the key) when it is malformed or of a type Parley does
 * not build in. A missing `type` is pika, as in Rasa.
 */
export function eventBrokerOf(
  file: string,
  entry: unknown,
  anonymization?: unknown,
): EventBrokerConfig | null {
  const rules = parseAnonymizationConfig(file, anonymization);
  if (entry === undefined || entry === null) return null;
  if (typeof entry !== 'object' || Array.isArray(entry)) {
    throw new DialogueError(
      'CONFIG.INVALID',
      `${file}: event_broker must be a mapping (type, url, …)`,
    );
  }
  const e = entry as Record<string, unknown>;
  const r = new Reader(`${file}: event_broker`, e, rules?.ruleLists ?? null);
  const type = (r.string('type') ?? 'pika').toLowerCase();
  switch (type) {
    case 'pika':
      return pikaOf(r);
    case 'kafka':
      return kafkaOf(r);
    case 'sql':
      return sqlOf(r);
    default:
      return r.fail(`type '${type}' is not supported (supported: ${SUPPORTED_BROKERS.join(', ')})`);
  }
}
