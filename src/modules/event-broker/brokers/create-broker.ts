import { Anonymizer, DialogueError } from 'src/core';
import { type EventBrokerConfig, type PiiRouting } from 'src/modules/engine';
import { type EventBroker } from './event-broker';
import { KafkaBroker } from './kafka-broker';
import { PiiBroker } from './pii-broker';
import { PikaBroker } from './pika-broker';
import { SqlBroker } from './sql-broker';

/** The broker adapter of a validated `event_broker` entry. */
export function createBroker(config: EventBrokerConfig, trackerDatabaseUrl: string): EventBroker {
  switch (config.type) {
    case 'pika':
      return withPii(
        config.pii,
        new PikaBroker(config),
        (name) => new PikaBroker({ ...config, queues: [name] }, true),
      );
    case 'kafka':
      return withPii(
        config.pii,
        new KafkaBroker(config),
        (name) => new KafkaBroker({ ...config, topic: name }),
      );
    case 'sql':
      if (sameDatabase(config.url, trackerDatabaseUrl)) {
        throw new DialogueError(
          'CONFIG.INVALID',
          `event_broker type sql points at Parley's own tracker database (${config.safeUrl}): give it a database of its own`,
        );
      }
      return new SqlBroker(config);
  }
}

/** The broker itself, or wrapped for `stream_pii: false` / anonymised destinations. */
function withPii(
  pii: PiiRouting,
  broker: EventBroker,
  destination: (name: string) => EventBroker,
): EventBroker {
  if (pii.streamPii && pii.anonymized.length === 0) return broker;
  return new PiiBroker(
    broker,
    pii.streamPii,
    pii.anonymized.map((d) => ({
      broker: destination(d.name),
      anonymizer: new Anonymizer(d.rules),
    })),
  );
}

const LOOPBACK = new Set(['localhost', '127.0.0.1', '::1', '[::1]']);

/** Same server (loopback names alike), port and database name. */
export function sameDatabase(a: string, b: string): boolean {
  const key = (raw: string): string => {
    const url = new URL(raw);
    const host = LOOPBACK.has(url.hostname) ? 'loopback' : url.hostname.toLowerCase();
    return `${host}:${url.port || '5432'}/${decodeURIComponent(url.pathname.slice(1)) || url.username || 'postgres'}`;
  };
  try {
    return key(a) === key(b);
  } catch {
    return false;
  }
}
