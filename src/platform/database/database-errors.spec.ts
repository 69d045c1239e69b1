import { EventEmitter } from 'node:events';
import { guardPoolConnections, isDatabaseUnavailable } from './database-errors';

function pgError(code: string, message = 'error'): Error {
  return Object.assign(new Error(message), { code });
}

describe('isDatabaseUnavailable', () => {
  it.each([
    [
      'a terminated backend (57P01)',
      pgError('57P01', 'terminating connection due to administrator command'),
    ],
    ['a server in recovery (57P03)', pgError('57P03')],
    ['too many connections (53300)', pgError('53300')],
    ['a connection exception (08006)', pgError('08006')],
    ['a refused connection', pgError('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:5432')],
    ['a reset connection', pgError('ECONNRESET')],
    ['a connection that ended', new Error('Connection terminated unexpectedly')],
    ['a connect timeout', new Error('timeout exceeded when trying to connect')],
    [
      'a broken client',
      new Error('Client has encountered a connection error and is not queryable'),
    ],
    ['a closed pool', new Error('Cannot use a pool after calling end on the pool')],
    ['no answer within query_timeout', new Error('Query read timeout')],
    [
      'a refusal on every address',
      new AggregateError([pgError('ECONNREFUSED'), pgError('ECONNREFUSED')], ''),
    ],
    [
      "TypeORM's wrapper of a driver error",
      Object.assign(new Error('query failed'), { driverError: pgError('57P01') }),
    ],
  ])('is true for %s', (_what, error) => {
    expect(isDatabaseUnavailable(error)).toBe(true);
  });

  it.each([
    ['a unique violation (23505)', pgError('23505', 'duplicate key value')],
    ['a syntax error (42601)', pgError('42601')],
    ['a lock timeout (55P03)', pgError('55P03')],
    ['a plain error', new Error('something else')],
    ['a string', 'ECONNREFUSED'],
    ['null', null],
    [
      "TypeORM's wrapper of a statement error",
      Object.assign(new Error('query failed'), { driverError: pgError('23505') }),
    ],
  ])('is false for %s', (_what, error) => {
    expect(isDatabaseUnavailable(error)).toBe(false);
  });
});

describe('guardPoolConnections', () => {
  it("gives each new connection an 'error' listener, so a lost connection raises nothing", () => {
    const pool = new EventEmitter();
    guardPoolConnections(pool);
    const client = new EventEmitter();
    pool.emit('connect', client);
    expect(() =>
      client.emit('error', new Error('terminating connection due to administrator command')),
    ).not.toThrow();
  });
});
