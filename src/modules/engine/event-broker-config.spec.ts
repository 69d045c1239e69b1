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
      pii: { streamPii: true, anonymized: [] },
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

describe('event_broker PII keys (stream_pii, anonymization_queues / _topics)', () => {
  const anonymization = {
    rule_lists: [
      { id: 'masked', rules: [{ entity: 'EMAIL_ADDRESS', substitution: 'mask' }] },
      { id: 'faked', rules: [{ entity: 'PERSON', substitution: 'faker' }] },
    ],
  };
  const pii = (entry: Record<string, unknown>, rules: unknown = anonymization): unknown =>
    (eventBrokerOf('endpoints.yml', entry, rules) as { pii: unknown }).pii;

  it('defaults: stream_pii true, no anonymised destinations', () => {
    expect(pii({ type: 'pika', url: 'h' }, undefined)).toEqual({ streamPii: true, anonymized: [] });
    expect(pii({ type: 'kafka', url: 'k:1' }, undefined)).toEqual({
      streamPii: true,
      anonymized: [],
    });
  });

  it('pika queues and kafka topics resolve their rule lists', () => {
    expect(
      pii({
        type: 'pika',
        url: 'h',
        stream_pii: false,
        anonymization_queues: [{ name: 'anon', anonymization_rules: 'masked' }],
      }),
    ).toEqual({
      streamPii: false,
      anonymized: [
        {
          name: 'anon',
          rules: expect.objectContaining({ id: 'masked' }),
        },
      ],
    });
    expect(
      pii({
        type: 'kafka',
        url: 'k:1',
        anonymization_topics: [
          { name: 't1', anonymization_rules: 'masked' },
          { name: 't2', anonymization_rules: 'faked' },
        ],
      }),
    ).toMatchObject({
      streamPii: true,
      anonymized: [
        { name: 't1', rules: { id: 'masked' } },
        { name: 't2', rules: { id: 'faked' } },
      ],
    });
  });

  it('a bare name (Rasa 3.13 form) takes the only rule list', () => {
    const one = { rule_lists: [anonymization.rule_lists[0]] };
    expect(pii({ type: 'kafka', url: 'k:1', anonymization_topics: ['t'] }, one)).toMatchObject({
      anonymized: [{ name: 't', rules: { id: 'masked' } }],
    });
  });

  it.each([
    [
      {
        type: 'pika',
        url: 'h',
        anonymization_topics: [{ name: 'x', anonymization_rules: 'masked' }],
      },
      anonymization,
      "'anonymization_topics' is not a key of this broker type; use 'anonymization_queues'",
    ],
    [
      { type: 'kafka', url: 'k:1', anonymization_queues: ['x'] },
      anonymization,
      "use 'anonymization_topics'",
    ],
    [
      {
        type: 'pika',
        url: 'h',
        anonymization_queues: [{ name: 'x', anonymization_rules: 'nope' }],
      },
      anonymization,
      "'anonymization_queues[0]'.anonymization_rules 'nope' is not a rule list id",
    ],
    [
      {
        type: 'pika',
        url: 'h',
        anonymization_queues: [{ name: 'x', anonymization_rules: 'masked' }],
      },
      undefined,
      "needs the 'anonymization' entry",
    ],
    [{ type: 'kafka', url: 'k:1', anonymization_topics: ['t'] }, anonymization, 'has 2 rule lists'],
    [
      { type: 'pika', url: 'h', stream_pii: 'no' },
      anonymization,
      "'stream_pii' must be true or false",
    ],
    [
      { type: 'sql', dialect: 'postgresql', url: 'h', db: 'e', stream_pii: false },
      anonymization,
      "'stream_pii' is supported by the pika and kafka brokers only",
    ],
    [
      { type: 'pika', url: 'h' },
      { rule_lists: [{ id: 'a', rules: [{ entity: 'PERSON', substitution: 'hash' }] }] },
      'anonymization.rule_lists[0].rules[0].substitution',
    ],
  ])('a wrong PII key stops start-up, naming the key (%#)', (entry, rules, message) => {
    expect(() => eventBrokerOf('endpoints.yml', entry, rules)).toThrow(message);
  });
});
