import { describe, expect, it } from 'vitest';
import { BaseConfigSchema, loadConfig } from '../src/index.js';

// The shared settings every service reads: what a studio's ConfigMap may give, and what it becomes.

describe('base configuration', () => {
  const base = { DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/x', NATS_URL: 'nats://127.0.0.1:4222' };

  it('makes REDIS_PREFIX its own key segment: a colon is added unless it ends with one', () => {
    expect(loadConfig(BaseConfigSchema, { ...base, REDIS_PREFIX: 'newcomer' }).REDIS_PREFIX).toBe('newcomer:');
    expect(loadConfig(BaseConfigSchema, { ...base, REDIS_PREFIX: 'newcomer:' }).REDIS_PREFIX).toBe('newcomer:');
    expect(loadConfig(BaseConfigSchema, { ...base }).REDIS_PREFIX).toBe('');
  });

  it('names hot statements by default and leaves them unnamed with PG_PREPARED_STATEMENTS=off', () => {
    expect(loadConfig(BaseConfigSchema, { ...base }).PG_PREPARED_STATEMENTS).toBe('on');
    expect(loadConfig(BaseConfigSchema, { ...base, PG_PREPARED_STATEMENTS: 'off' }).PG_PREPARED_STATEMENTS).toBe('off');
    expect(() => loadConfig(BaseConfigSchema, { ...base, PG_PREPARED_STATEMENTS: 'maybe' })).toThrow(/PG_PREPARED_STATEMENTS/);
  });

  it('migrates at start unless MIGRATE_ON_START=off (replicas behind PgBouncer, migrated by --migrate-only)', () => {
    expect(loadConfig(BaseConfigSchema, { ...base }).MIGRATE_ON_START).toBe('on');
    expect(loadConfig(BaseConfigSchema, { ...base, MIGRATE_ON_START: 'off' }).MIGRATE_ON_START).toBe('off');
  });
});
