import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startService } from '@ccs/shared';
import { createTestDatabase, deleteTestStreams, isolatedConfig, testInfra, type InfraUrls } from '@ccs/shared/testing';
import { WalletConfigSchema } from '../../services/wallet/src/config.js';
import { walletService } from '../../services/wallet/src/service.js';

// PG_SEARCH_PATH=role: the schema comes from the role (as behind PgBouncer in transaction mode,
// which refuses the `options` startup parameter), checked at start.
describe('PG_SEARCH_PATH=role', () => {
  let infra: InfraUrls;
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  const role = `ccs_role_${randomBytes(4).toString('hex')}`;
  const stray = `${role}_x`;
  const prefixes: string[] = [];

  const admin = async (sql: string) => {
    const c = new pg.Client({ connectionString: infra.databaseUrl });
    await c.connect();
    try {
      await c.query(sql);
    } finally {
      await c.end();
    }
  };
  const urlAs = (user: string) => {
    const u = new URL(db.url);
    u.username = user;
    return u.toString();
  };

  beforeAll(async () => {
    infra = await testInfra();
    db = await createTestDatabase(infra);
    const dbName = new URL(db.url).pathname.slice(1);
    for (const r of [role, stray]) {
      await admin(`CREATE ROLE ${r} LOGIN`);
      await admin(`GRANT CREATE, CONNECT ON DATABASE ${dbName} TO ${r}`);
    }
    await admin(`ALTER ROLE ${role} SET search_path = wallet`);
  });
  afterAll(async () => {
    for (const p of prefixes) await deleteTestStreams(infra.natsUrl, p);
    await db?.drop();
    for (const r of [role, stray]) await admin(`DROP ROLE IF EXISTS ${r}`).catch(() => undefined);
  });

  it("starts with the role's search_path, migrates into the schema and works without the startup option", async () => {
    const config = WalletConfigSchema.parse(isolatedConfig(infra, urlAs(role), { PG_SEARCH_PATH: 'role' }));
    prefixes.push(config.NATS_PREFIX);
    const svc = await startService(walletService, config);
    try {
      expect((await svc.deps.pool.query<{ p: string }>("SELECT current_setting('search_path') AS p")).rows[0]!.p).toBe('wallet');
      // Unqualified names resolve to the service's schema.
      expect((await svc.deps.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM balances')).rows[0]!.n).toBe(0);
    } finally {
      await svc.stop();
    }
  });

  it('refuses to start, saying what to run, when the role does not name the schema', async () => {
    const config = WalletConfigSchema.parse(isolatedConfig(infra, urlAs(stray), { PG_SEARCH_PATH: 'role' }));
    prefixes.push(config.NATS_PREFIX);
    await expect(startService(walletService, config)).rejects.toThrow(/ALTER ROLE <role> SET search_path = wallet/);
  });
});
