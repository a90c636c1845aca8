import { describe, expect, it } from 'vitest';
import { describeInfraError } from '../src/runtime/infra-errors.js';

describe('infrastructure errors say what is actually wrong', () => {
  it('tells a missing database and a missing role from a server that is down', () => {
    const url = 'postgres://app:secret@db.internal:5432/chests';
    expect(describeInfraError('Postgres', url, { code: '3D000', message: 'database "chests" does not exist' })).toBe(
      'Postgres at postgres://***@db.internal:5432/chests answers, but the database "chests" does not exist: create it (createdb -h db.internal -p 5432 -U app chests) or set DATABASE_URL to an existing database.',
    );
    expect(describeInfraError('Postgres', url, { code: '28P01', message: 'password authentication failed' })).toMatch(
      /^Postgres at postgres:\/\/\*\*\*@db.internal:5432\/chests answers, but refused the role "app" \(its password was refused\): create the role/,
    );
    expect(describeInfraError('Postgres', url, { code: 'ECONNREFUSED' })).toMatch(
      /^Cannot reach Postgres at postgres:\/\/\*\*\*@db.internal:5432\/chests \(ECONNREFUSED\): start it/,
    );
  });

  it('names a malformed URL, a URL of another scheme and an unknown host, never the password', () => {
    expect(describeInfraError('Postgres', 'postgres//nope', new Error('x'))).toBe(
      'DATABASE_URL is not a valid URL (postgres//nope): expected e.g. postgres://user@host:5432/database.',
    );
    expect(describeInfraError('Redis', 'http://cache:6379', new Error('x'))).toBe(
      'REDIS_URL (http://cache:6379) is not a Redis URL: it must start with redis:// or rediss://.',
    );
    const unknown = describeInfraError('NATS', 'nats://user:pw@natz:4222', { code: 'ENOTFOUND' });
    expect(unknown).toBe('Cannot reach NATS at nats://***@natz:4222: the host "natz" is not known; check the host in NATS_URL.');
    expect(unknown).not.toContain('pw');
    // A list of servers (a NATS cluster) is a valid NATS_URL: its first server is described.
    const list = describeInfraError('NATS', 'nats://127.0.0.1:4222,nats://127.0.0.1:4223', { code: 'ECONNREFUSED' });
    expect(list).not.toMatch(/not a valid URL/);
    expect(list).toContain('127.0.0.1:4222');
  });
});
