/**
 * What `npm run test:containers` (TEST_INFRA=containers) runs against: the Postgres, NATS and
 * Redis the global setup started in containers, not this machine's own servers. Skipped in any
 * other run (the services' tests check the rest; docs/testing-containers.md).
 */
import { Redis } from 'ioredis';
import { connect } from 'nats';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { RESOLVED_MARKER, createTestDatabase, testInfra } from '../../packages/shared/src/testing/infra.js';

const inContainers = process.env[RESOLVED_MARKER] === 'containers';

describe.skipIf(!inContainers)('TEST_INFRA=containers', () => {
  it('runs Postgres in a container: not on the standard local port, the container its own host', async () => {
    const infra = await testInfra();
    const url = new URL(infra.databaseUrl);
    expect(url.port).not.toBe('5432');
    const db = await createTestDatabase(infra);
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      const { rows } = await client.query<{ version: string; server: string | null; pid: number }>(
        'SELECT version() AS version, inet_server_addr()::text AS server, pg_backend_pid() AS pid',
      );
      // The connection arrives through Docker's port mapping: the server sees its container address.
      expect(rows[0].server).not.toMatch(/^(127\.0\.0\.1|::1)/);
      const image = process.env.TEST_POSTGRES_IMAGE;
      if (image?.startsWith('local/postgres:')) expect(rows[0].version).toContain(`PostgreSQL ${image.split(':')[1]}.`);
    } finally {
      await client.end();
      await db.drop();
    }
  });

  it('runs NATS with JetStream in a container', async () => {
    const infra = await testInfra();
    expect(new URL(infra.natsUrl.replace(/^nats:/, 'http:')).port).not.toBe('4222');
    const nc = await connect({ servers: infra.natsUrl });
    try {
      const jsm = await nc.jetstreamManager();
      const account = await jsm.getAccountInfo();
      expect(account.limits).toBeDefined();
      expect(nc.info?.jetstream).toBe(true);
    } finally {
      await nc.close();
    }
  });

  it('runs Redis in a container, reachable from the host', async () => {
    const infra = await testInfra();
    expect(new URL(infra.redisUrl).port).not.toBe('6379');
    const redis = new Redis(infra.redisUrl, { maxRetriesPerRequest: 1 });
    try {
      expect(await redis.ping()).toBe('PONG');
      expect(await redis.info('server')).toMatch(/redis_version:\d+\./);
    } finally {
      redis.disconnect();
    }
  });
});
