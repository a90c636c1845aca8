import { randomUUID } from 'node:crypto';
import { copyFile, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateSchema } from '@ccs/shared';
import { createTestDatabase, testInfra } from '@ccs/shared/testing';
import { replayOf } from '../../src/opening/replay.js';

/**
 * One store of openings' Idempotency-Keys (migration 0022, `opening_keys`): a single open's key,
 * stored on its opening before, and a batch's, in `opening_batches` before, both replay after the
 * upgrade, each in its own scope; a key used for other chests is still a 409.
 */
const migrations = fileURLToPath(new URL('../../migrations', import.meta.url));
const app = randomUUID();
const player = randomUUID();
const type = randomUUID();
const chests = [randomUUID(), randomUUID(), randomUUID()];
const openings = [randomUUID(), randomUUID(), randomUUID()];

/** One chest type, three opened chests: the first opened alone with key `single-1`, the others as a batch with key `batch-1`. */
async function seedOpenings(db: pg.Client): Promise<void> {
  await db.query('INSERT INTO chests.apps (app_id, content_version) VALUES ($1, 1)', [app]);
  await db.query(
    `INSERT INTO chests.content_versions (app_id, version, starter_chest_type, inventory_capacity, currencies, rarities, collectibles)
     VALUES ($1, 1, 'wooden', 100, ARRAY['coins'], '[]', '[]')`,
    [app],
  );
  await db.query(
    `INSERT INTO chests.chest_types (app_id, id, slug, content_version, name, description, rules, position)
     VALUES ($1, $2, 'wooden', 1, 'Wooden', 'A chest', '{}', 1)`,
    [app, type],
  );
  for (const [i, chest] of chests.entries()) {
    await db.query(
      `INSERT INTO chests.inventory_chests (id, app_id, player_id, chest_type_id, source, opened_at) VALUES ($1, $2, $3, $4, 'earned', now())`,
      [chest, app, player, type],
    );
    await db.query(
      `INSERT INTO chests.openings (id, app_id, player_id, chest_id, chest_type_id, content_version, opened_at, items, experience, idempotency_key)
       VALUES ($1, $2, $3, $4, $5, 1, now(), '[]', 0, $6)`,
      [openings[i], app, player, chest, type, i === 0 ? 'single-1' : null],
    );
  }
  await db.query(
    `INSERT INTO chests.opening_batches (app_id, player_id, idempotency_key, chest_ids, opening_ids) VALUES ($1, $2, 'batch-1', $3, $4)`,
    [app, player, chests.slice(1), openings.slice(1)],
  );
}

describe('migration 0022: one store of opening keys', () => {
  let db: pg.Client;
  let pool: pg.Pool;
  let drop: () => Promise<void>;

  beforeAll(async () => {
    const created = await createTestDatabase(await testInfra());
    drop = created.drop;
    const before = await mkdtemp(join(tmpdir(), 'chests-0021-'));
    try {
      for (const f of (await readdir(migrations)).filter((n) => n < '0022')) await copyFile(join(migrations, f), join(before, f));
      await migrateSchema(created.url, 'chests', before);
    } finally {
      await rm(before, { recursive: true, force: true });
    }
    db = new pg.Client({ connectionString: created.url });
    await db.connect();
    await seedOpenings(db);
    const applied = await migrateSchema(created.url, 'chests', migrations);
    expect(applied[0]).toBe('0022_opening_keys');
    pool = new pg.Pool({ connectionString: created.url, options: '-c search_path=chests', max: 2 });
  });
  afterAll(async () => {
    await pool?.end();
    await db?.end();
    await drop?.();
  });

  it('moves every key, each in its scope, and drops the old ones', async () => {
    const { rows } = await db.query('SELECT kind, idempotency_key, chest_ids, opening_ids FROM chests.opening_keys ORDER BY kind');
    expect(rows).toEqual([
      { kind: 'batch', idempotency_key: 'batch-1', chest_ids: chests.slice(1), opening_ids: openings.slice(1) },
      { kind: 'one', idempotency_key: 'single-1', chest_ids: chests.slice(0, 1), opening_ids: openings.slice(0, 1) },
    ]);
    const old = await db.query(
      "SELECT to_regclass('chests.opening_batches') AS t, (SELECT count(*)::int FROM information_schema.columns WHERE table_schema = 'chests' AND table_name = 'openings' AND column_name = 'idempotency_key') AS c",
    );
    expect(old.rows).toEqual([{ t: null, c: 0 }]);
  });

  it('replays the keys stored before the upgrade; the same key on other chests is 409', async () => {
    const who = { appId: app, playerId: player };
    const single = await replayOf(pool, { ...who, kind: 'one', chestIds: [chests[0]!], idempotencyKey: 'single-1' });
    expect(single).toMatchObject({ replayed: true, openings: [{ openingId: openings[0] }] });
    const batch = await replayOf(pool, { ...who, kind: 'batch', chestIds: chests.slice(1), idempotencyKey: 'batch-1' });
    expect(batch).toMatchObject({ replayed: true, openings: [{ openingId: openings[1] }, { openingId: openings[2] }] });
    // Each key keeps its scope: the single open's key names no batch.
    expect(await replayOf(pool, { ...who, kind: 'batch', chestIds: [chests[0]!], idempotencyKey: 'single-1' })).toBeUndefined();
    await expect(replayOf(pool, { ...who, kind: 'one', chestIds: [chests[1]!], idempotencyKey: 'single-1' })).rejects.toMatchObject({
      code: 'idempotency_key_reused',
    });
    await expect(replayOf(pool, { ...who, kind: 'batch', chestIds: chests.slice(1).reverse(), idempotencyKey: 'batch-1' })).rejects.toMatchObject({
      code: 'idempotency_key_reused',
    });
  });

  it('a second use of a key fails on the one unique index', async () => {
    await expect(
      db.query(
        `INSERT INTO chests.opening_keys (app_id, player_id, kind, idempotency_key, chest_ids, opening_ids) VALUES ($1, $2, 'one', 'single-1', '{}', '{}')`,
        [app, player],
      ),
    ).rejects.toMatchObject({ constraint: 'opening_keys_pkey' });
  });
});
