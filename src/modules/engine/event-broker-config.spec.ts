import { eventBrokerOf } from './event-broker-config';

const of = (entry: unknown): ReturnType<typeof eventBrokerOf> =>
  eventBrokerOf('endpoints.yml', entry);

describe('event_broker of endpoints.yml', () => {
  it('absent: no broker', () => {
    expect(of(undefined)).toBeNull();
    expect(of(null)).toBeNull();
  });

  it('pika: Rasa defaults, credentials in the URL, the password kept out of the log form', () => {
    const c = of({ type: 'pika', url: 'rabbit', username: 'u', password: 's3cret' });
    expect(c).toEqual({
      type: 'pika',
      url: 'amqp://u:s3cret@rabbit:5672',
      safeUrl: 'amqp://u:***@rabbit:5672',
      exchangeName: 'rasa-exchange',
      queues: ['rasa_core_events'],
      connectionAttempts: 20,
      retryDelaySeconds: 5,
      raiseOnFailure: false,
    });
  });

  it('pika: host, port, queues, exchange and retry keys; a missing type is pika as in Rasa', () => {
    const c = of({
      host: 'amqp://h:5673',
      queues: ['a', 'b'],
      exchange_name: 'x',
      connection_attempts: 3,
      retry_delay_in_seconds: 0.5,
      raise_on_failure: true,
    });
    expect(c).toMatchObject({
      type: 'pika',
      url: 'amqp://h:5673',
      exchangeName: 'x',
      queues: ['a', 'b'],
      connectionAttempts: 3,
      retryDelaySeconds: 0.5,
      raiseOnFailure: true,
    });
  });

  it('kafka: url string or list, Parley defaults (partition_by_sender true, PLAINTEXT)', () => {
    expect(of({ type: 'kafka', url: 'k1:9092' })).toMatchObject({
      type: 'kafka',
      brokers: ['k1:9092'],
      topic: 'rasa_core_events',
      partitionBySender: true,
      securityProtocol: 'PLAINTEXT',
      sasl: null,
    });
    expect(
      of({
        type: 'kafka',
        url: ['k1:9092', 'k2:9092'],
        topic: 'rasa-events',
        client_id: 'me',
        partition_by_sender: false,
        security_protocol: 'SASL_SSL',
        sasl_mechanism: 'SCRAM-SHA-512',
        sasl_username: 'u',
        sasl_password: 'p',
        ssl_check_hostname: false,
      }),
    ).toMatchObject({
      brokers: ['k1:9092', 'k2:9092'],
      topic: 'rasa-events',
      clientId: 'me',
      partitionBySender: false,
      securityProtocol: 'SASL_SSL',
      sasl: { mechanism: 'scram-sha-512', username: 'u', password: 'p' },
      ssl: { checkHostname: false },
    });
  });

  it('sql: postgresql URL from host, port, db and credentials', () => {
    expect(
      of({
        type: 'SQL',
        dialect: 'postgresql',
        url: 'db',
        port: 5433,
        db: 'events',
        username: 'u',
        password: 'p',
      }),
    ).toEqual({
      type: 'sql',
      url: 'postgres://u:p@db:5433/events',
      safeUrl: 'postgres://u:***@db:5433/events',
    });
  });

  it.each([
    [{ type: 'file', path: 'x.log' }, "type 'file' is not supported (supported: pika, kafka, sql)"],
    [{ type: 'pika' }, "type pika needs 'url'"],
    [{ type: 'pika', url: 'h', port: 'many' }, "'port' must be a number"],
    [{ type: 'pika', url: 'h', queues: [] }, "'queues' must be a non-empty"],
    [
      { type: 'pika', url: 'h', raise_on_failure: 'yes' },
      "'raise_on_failure' must be true or false",
    ],
    [{ type: 'kafka' }, "type kafka needs 'url'"],
    [{ type: 'kafka', url: 'no-port' }, 'not host:port'],
    [{ type: 'kafka', url: 'k:1', security_protocol: 'TLS' }, "security_protocol 'TLS'"],
    [
      {
        type: 'kafka',
        url: 'k:1',
        security_protocol: 'SASL_PLAINTEXT',
        sasl_mechanism: 'GSSAPI',
        sasl_username: 'u',
        sasl_password: 'p',
      },
      "sasl_mechanism 'GSSAPI' is not supported",
    ],
    [{ type: 'kafka', url: 'k:1', security_protocol: 'SASL_PLAINTEXT' }, "needs 'sasl_username'"],
    [{ type: 'sql', db: 'events.db' }, "dialect 'sqlite' is not supported"],
    [{ type: 'sql', dialect: 'postgresql', url: 'h' }, "needs 'url' (or 'host') and 'db'"],
    ['pika', 'event_broker must be a mapping'],
  ])('%j is a start-up error naming the problem', (entry, message) => {
    expect(() => of(entry)).toThrow(message);
    expect(() => of(entry)).toThrow('endpoints.yml');
  });
});
