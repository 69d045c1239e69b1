import { DialogueError } from 'src/core';
import { type EventBrokerConfig } from 'src/modules/engine';
import { type EventBroker } from './event-broker';
import { KafkaBroker } from './kafka-broker';
import { PikaBroker } from './pika-broker';
import { SqlBroker } from './sql-broker';

/** The broker adapter of a validated `event_broker` entry. */
export function createBroker(config: EventBrokerConfig, trackerDatabaseUrl: string): EventBroker {
  switch (config.type) {
    case 'pika':
      return new PikaBroker(config);
    case 'kafka':
      return new KafkaBroker(config);
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
