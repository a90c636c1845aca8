import { randomUUID } from 'node:crypto';
import { copyFile, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AdminGrantChests, AppError, migrateSchema } from '@ccs/shared';
import { createTestDatabase, testInfra } from '@ccs/shared/testing';
import { callOf, chestsApp, chestsSql, startChestsTier, type ChestsTierRun } from '../support/chests-tier.js';

/**
 * Studio chest grants (chests.v1.admin_grant_chests, endpoints/studio-chest-grants.ts): chests of
 * the current content, once per reference; and the move of players' studio_chest_grants table to
 * chests (chests' 0021, players' 0012), which loses no row whichever service migrates first.
 */
describe('chests.v1.admin_grant_chests', () => {
  let run: ChestsTierRun;
  let appId: string;
  let types: Record<string, string>;

  beforeAll(async () => {
    run = await startChestsTier();
    ({ appId, types } = await chestsApp(run.tier));
  });
  afterAll(async () => run?.tier.close());

  const grant = (playerId: string, chestTypeId: string, quantity: number, reference?: string) =>
    run.tier.bus.request(AdminGrantChests, { appId, playerId, chestTypeId, quantity, ...(reference ? { reference } : {}) }, callOf(appId));
  const owned = async (playerId: string) =>
    (await chestsSql<{ id: string }>(run.tier, 'SELECT id FROM inventory_chests WHERE app_id = $1 AND player_id = $2', [appId, playerId]))
      .map((r) => r.id)
      .sort();
  const eventually = async (check: () => Promise<void>, ms = 20_000) => {
    const until = Date.now() + ms;
    for (;;) {
      try {
        return await check();
      } catch (err) {
        if (Date.now() > until) throw err;
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  };

  it('grants by slug or catalog id into the inventory; the same reference grants nothing more and answers replayed', async () => {
    const playerId = randomUUID();
    const first = await grant(playerId, 'silver-chest', 2, 'incident-42');
    expect(first).toMatchObject({ playerId, chestType: 'silver-chest', replayed: false });
    expect(first.chests).toHaveLength(2);
    await eventually(async () => expect(await owned(playerId)).toEqual([...first.chests].sort()));
    // By catalog id, same reference: the same chest ids, nothing sent.
    const again = await grant(playerId, types['silver-chest']!, 2, 'incident-42');
    expect(again).toEqual({ ...first, replayed: true });
    const reused = await grant(playerId, 'silver-chest', 3, 'incident-42').catch((e: unknown) => e);
    expect(reused).toBeInstanceOf(AppError);
    expect(reused).toMatchObject({ kind: 'conflict', code: 'reference_reused' });
    // Without a reference, new chests each time.
    const plain = await grant(playerId, 'wooden-chest', 1);
    expect(plain.replayed).toBe(false);
    await eventually(async () => expect(await owned(playerId)).toHaveLength(3));
  });

  it('answers concurrent grants of one reference with one grant', async () => {
    const playerId = randomUUID();
    const answers = await Promise.all(Array.from({ length: 4 }, () => grant(playerId, 'wooden-chest', 1, 'event-7')));
    expect(new Set(answers.map((a) => a.chests[0])).size).toBe(1);
    expect(answers.filter((a) => !a.replayed)).toHaveLength(1);
    await eventually(async () => expect(await owned(playerId)).toEqual(answers[0]!.chests));
  });

  it('answers a grant players recorded before the move as replayed, with the chest ids players derived', async () => {
    const movedApp = '00000000-0000-4000-8000-0000000000a1';
    const playerId = '00000000-0000-4000-8000-0000000000b1';
    await chestsApp(run.tier, { appId: movedApp });
    // The row as players' table held it, moved here by the migrations.
    await chestsSql(
      run.tier,
      "INSERT INTO studio_chest_grants (app_id, player_id, reference, chest_type_id, quantity) VALUES ($1, $2, 'moved-ref', 'silver-chest', 1)",
      [movedApp, playerId],
    );
    const again = await run.tier.bus.request(
      AdminGrantChests,
      { appId: movedApp, playerId, chestTypeId: 'silver-chest', quantity: 1, reference: 'moved-ref' },
      callOf(movedApp),
    );
    // The id players' grant gave this reference (the same name-based UUID), so nothing is added twice either way.
    expect(again).toEqual({ playerId, chestType: 'silver-chest', chests: ['c101a0a1-b15a-5849-b663-1a0f9dbb70ee'], replayed: true });
  });

  it('refuses a chest type the current content does not have', async () => {
    const err = await grant(randomUUID(), 'no-such-chest', 1, 'x').catch((e: unknown) => e);
    expect(err).toMatchObject({ kind: 'invalid', code: 'chest_type_not_found' });
  });
});

const chestsMigrations = fileURLToPath(new URL('../../migrations', import.meta.url));
const playersMigrations = fileURLToPath(new URL('../../../players/migrations', import.meta.url));

/** Migrates `schema` with the files of `dir` before `upTo` (exclusive) only. */
async function migrateBefore(url: string, schema: string, dir: string, upTo: string): Promise<void> {
  const before = await mkdtemp(join(tmpdir(), `${schema}-before-`));
  try {
    for (const f of (await readdir(dir)).filter((n) => n < upTo)) await copyFile(join(dir, f), join(before, f));
    await migrateSchema(url, schema, before);
  } finally {
    await rm(before, { recursive: true, force: true });
  }
}

describe.each([
  ['chests first', ['chests', 'players'], 3],
  ['players first', ['players', 'chests'], 3],
  ['both at once', [], 3],
  ['a new database, chests first', ['chests', 'players'], 0],
  ['a new database, players first', ['players', 'chests'], 0],
] as const)('the move of studio_chest_grants from players to chests (%s)', (_name, order, n) => {
  let db: pg.Client;
  let drop: () => Promise<void>;
  const rows = Array.from({ length: n }, (_, i) => [randomUUID(), randomUUID(), `ref-${i}`, 'silver-chest', i + 1]);

  beforeAll(async () => {
    const created = await createTestDatabase(await testInfra());
    drop = created.drop;
    // Both schemas as the release before the move left them, players' table holding the grants.
    await migrateBefore(created.url, 'players', playersMigrations, '0012');
    await migrateBefore(created.url, 'chests', chestsMigrations, '0021');
    db = new pg.Client({ connectionString: created.url });
    await db.connect();
    for (const r of rows) {
      await db.query(
        'INSERT INTO players.studio_chest_grants (app_id, player_id, reference, chest_type_id, quantity) VALUES ($1, $2, $3, $4, $5)',
        r,
      );
    }
    const up = {
      chests: () => migrateSchema(created.url, 'chests', chestsMigrations),
      players: () => migrateSchema(created.url, 'players', playersMigrations),
    };
    if (order.length === 0) await Promise.all([up.chests(), up.players()]);
    else for (const s of order) await up[s]();
  });
  afterAll(async () => {
    await db?.end();
    await drop?.();
  });

  it("holds every grant in chests' table and none in players'", async () => {
    const moved = await db.query('SELECT app_id, player_id, reference, chest_type_id, quantity FROM chests.studio_chest_grants ORDER BY reference');
    expect(moved.rows.map((r) => Object.values(r))).toEqual(rows);
    const old = await db.query("SELECT to_regclass('players.studio_chest_grants') AS t");
    expect(old.rows).toEqual([{ t: null }]);
  });
});

describe('the move with one database role per service (docs/deploy.md)', () => {
  const suffix = randomUUID().slice(0, 8);
  const roles = { players: `t_players_${suffix}`, chests: `t_chests_${suffix}` };
  let adminUrl: string;
  let drop: () => Promise<void>;
  const as = (role: string) => {
    const u = new URL(adminUrl);
    u.username = role;
    return u.toString();
  };
  const admin = async (sql: string) => {
    const c = new pg.Client({ connectionString: adminUrl });
    await c.connect();
    try {
      return await c.query(sql);
    } finally {
      await c.end();
    }
  };

  beforeAll(async () => {
    ({ url: adminUrl, drop } = await createTestDatabase(await testInfra()));
    const dbName = new URL(adminUrl).pathname.slice(1);
    for (const r of Object.values(roles)) {
      await admin(`CREATE ROLE ${r} LOGIN`);
      await admin(`GRANT CREATE, CONNECT ON DATABASE ${dbName} TO ${r}`);
    }
    await admin(`GRANT ${roles.players} TO ${roles.chests}`);
  });
  afterAll(async () => {
    await drop?.();
    for (const r of Object.values(roles)) await admin(`DROP ROLE IF EXISTS ${r}`).catch(() => undefined);
  });

  it("moves players' rows as chests' role, and players' role never needs chests' schema", async () => {
    await migrateBefore(as(roles.players), 'players', playersMigrations, '0012');
    await admin(
      `INSERT INTO players.studio_chest_grants (app_id, player_id, reference, chest_type_id, quantity) VALUES ('${randomUUID()}', '${randomUUID()}', 'r', 'x', 1)`,
    );
    await migrateSchema(as(roles.players), 'players', playersMigrations);
    await migrateSchema(as(roles.chests), 'chests', chestsMigrations);
    const r = await admin("SELECT count(*)::int AS n, to_regclass('players.studio_chest_grants') AS old FROM chests.studio_chest_grants");
    expect(r.rows).toEqual([{ n: 1, old: null }]);
  });
});
