import { randomUUID } from 'node:crypto';
import { copyFile, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateSchema } from '@ccs/shared';
import { createTestDatabase, testInfra } from '@ccs/shared/testing';

/**
 * The webhook tables an older players kept in its schema end up in egress's, every row, whichever
 * service migrates first (egress's 0001 moves them; players' 0013 moves them, or copies them into
 * egress's tables and drops its own), and players' migrations create none.
 */
const egressMigrations = fileURLToPath(new URL('../migrations', import.meta.url));
const playersMigrations = fileURLToPath(new URL('../../players/migrations', import.meta.url));
const OLD_TABLES = fileURLToPath(new URL('./fixtures/players-webhook-tables.sql', import.meta.url));

async function migrateBefore(url: string, schema: string, dir: string, upTo: string): Promise<void> {
  const before = await mkdtemp(join(tmpdir(), `${schema}-before-`));
  try {
    for (const f of (await readdir(dir)).filter((n) => n < upTo)) await copyFile(join(dir, f), join(before, f));
    await migrateSchema(url, schema, before);
  } finally {
    await rm(before, { recursive: true, force: true });
  }
}

type Order = 'egress first' | 'players first' | 'both at once';

describe.each<Order>(['egress first', 'players first', 'both at once'])('the webhook tables move from players to egress (%s)', (order) => {
  let db: pg.Client;
  let drop: () => Promise<void>;
  const appId = randomUUID();
  const endpointId = randomUUID();
  const events = [randomUUID(), randomUUID()];

  beforeAll(async () => {
    const created = await createTestDatabase(await testInfra());
    drop = created.drop;
    const up = {
      egress: () => migrateSchema(created.url, 'egress', egressMigrations),
      players: () => migrateSchema(created.url, 'players', playersMigrations),
    };
    await migrateBefore(created.url, 'players', playersMigrations, '0013');
    db = new pg.Client({ connectionString: created.url });
    await db.connect();
    // Players' tables as an older players left them, with rows.
    await db.query('SET search_path = players');
    await db.query(await readFile(OLD_TABLES, 'utf8'));
    await db.query("INSERT INTO webhook_endpoints (id, app_id, url, secret) VALUES ($1, $2, 'https://hooks.example.com/a', 'whsec_1')", [
      endpointId,
      appId,
    ]);
    for (const [i, id] of events.entries()) {
      await db.query("INSERT INTO webhook_events (id, app_id, type, occurred_at, body) VALUES ($1, $2, 'chest.opened', now(), '{}')", [id, appId]);
      await db.query("INSERT INTO webhook_deliveries (endpoint_id, event_id, status, last_error) VALUES ($1, $2, 'parked', $3)", [
        endpointId,
        id,
        ['timeout', 'HTTP 500: <html>secret</html>'][i],
      ]);
    }
    await db.query('RESET search_path');
    if (order === 'egress first') await up.egress().then(up.players);
    else if (order === 'players first') await up.players().then(up.egress);
    else await Promise.all([up.players(), up.egress()]);
  });
  afterAll(async () => {
    await db?.end();
    await drop?.();
  });

  it("holds every endpoint, event and delivery in egress's schema, none in players', error classes only", async () => {
    expect((await db.query('SELECT id, url FROM egress.webhook_endpoints')).rows).toEqual([{ id: endpointId, url: 'https://hooks.example.com/a' }]);
    expect((await db.query('SELECT id FROM egress.webhook_events ORDER BY id')).rows.map((r) => r.id)).toEqual([...events].sort());
    const deliveries = await db.query('SELECT event_id, status, last_error FROM egress.webhook_deliveries');
    expect(Object.fromEntries(deliveries.rows.map((r) => [r.event_id, [r.status, r.last_error]]))).toEqual({
      [events[0]!]: ['parked', 'timeout'],
      [events[1]!]: ['parked', 'http_500'],
    });
    const left = await db.query(
      "SELECT to_regclass('players.webhook_endpoints') AS e, to_regclass('players.webhook_events') AS v, to_regclass('players.webhook_deliveries') AS d",
    );
    expect(left.rows).toEqual([{ e: null, v: null, d: null }]);
  });
});

describe("players' migrations", () => {
  let url: string;
  let drop: () => Promise<void>;
  let db: pg.Client;
  beforeAll(async () => {
    ({ url, drop } = await createTestDatabase(await testInfra()));
    db = new pg.Client({ connectionString: url });
    await db.connect();
  });
  afterAll(async () => {
    await db?.end();
    await drop?.();
  });
  const webhookTables = async (schema: string) =>
    (await db.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_tables WHERE schemaname = $1 AND tablename LIKE 'webhook%'", [schema])).rows[0]!
      .n;

  it('create no webhook table on a new database', async () => {
    await migrateSchema(url, 'egress', egressMigrations);
    await migrateSchema(url, 'players', playersMigrations);
    expect(await webhookTables('players')).toBe(0);
    expect(await webhookTables('egress')).toBe(3);
  });

  it("drop empty webhook tables an older players made after egress had its own, and never touch egress's", async () => {
    const more = await createTestDatabase(await testInfra());
    const other = new pg.Client({ connectionString: more.url });
    await other.connect();
    try {
      await migrateSchema(more.url, 'egress', egressMigrations);
      await migrateBefore(more.url, 'players', playersMigrations, '0013');
      await other.query('SET search_path = players');
      await other.query(await readFile(OLD_TABLES, 'utf8'));
      await other.query('RESET search_path');
      await migrateSchema(more.url, 'players', playersMigrations);
      const n = await other.query("SELECT schemaname, count(*)::int AS n FROM pg_tables WHERE tablename LIKE 'webhook%' GROUP BY 1 ORDER BY 1");
      expect(n.rows).toEqual([{ schemaname: 'egress', n: 3 }]);
    } finally {
      await other.end();
      await more.drop();
    }
  });
});
