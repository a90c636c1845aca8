import { randomUUID } from 'node:crypto';
import { copyFile, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppContentLoaded, DebitCurrency, endpoint, ListChestTypes, migrateSchema, readContentFile, RefundDebit, chestTypeId } from '@ccs/shared';
import { createTestDatabase, startServiceTier, testInfra, type ServiceTier } from '@ccs/shared/testing';
import { ChestsConfigSchema, paymentSweep, type ChestsConfig } from '../../src/config.js';
import { chestsService } from '../../src/service.js';

/**
 * One payments table and one sweeper for purchases, keys and timer skips (migration 0012,
 * workers/payments-sweeper.ts): the upgrade moves every row of the two former tables, in every
 * state, with their uniqueness; the one sweeper settles a stale payment of any kind.
 */
const migrations = fileURLToPath(new URL('../../migrations', import.meta.url));
const ids = Object.fromEntries(
  ['app', 'type', 'done', 'pend', 'deb', 'comp', 'key', 'keyDone', 'skip', 'skipDone', 'refunding', 'chest'].map((k) => [k, randomUUID()]),
);
const player = randomUUID();

/** A catalog of one chest type, as the content consumer would have stored it before the upgrade. */
async function seedCatalog(db: pg.Client): Promise<void> {
  await db.query('INSERT INTO chests.apps (app_id, content_version) VALUES ($1, 1)', [ids.app]);
  await db.query(
    `INSERT INTO chests.content_versions (app_id, version, starter_chest_type, inventory_capacity, currencies, rarities, collectibles)
     VALUES ($1, 1, 'wooden', 100, ARRAY['coins'], '[]', '[]')`,
    [ids.app],
  );
  await db.query(
    `INSERT INTO chests.chest_types (app_id, id, slug, content_version, name, description, rules, position)
     VALUES ($1, $2, 'wooden', 1, 'Wooden', 'A chest', '{}', 1)`,
    [ids.app, ids.type],
  );
}

/** Rows of `purchases` and `chest_debits` in every state, as a deploy of 0011 leaves them. */
async function seedOldPayments(db: pg.Client): Promise<void> {
  const purchase = `INSERT INTO chests.purchases (id, app_id, player_id, chest_type_id, currency, quantity, amount, status, failure, idempotency_key, answer)
                    VALUES ($1, $2, $3, $4, 'coins', $5, $6, $7, $8, $9, $10)`;
  await db.query(purchase, [ids.done, ids.app, player, ids.type, 2, '1000.00', 'completed', null, 'key-1', '{"purchaseId":"x"}']);
  await db.query(purchase, [ids.pend, ids.app, player, ids.type, 1, '500.00', 'pending', null, 'key-2', null]);
  await db.query(purchase, [ids.deb, ids.app, player, ids.type, 1, '500.00', 'debited', null, null, null]);
  await db.query(purchase, [ids.comp, ids.app, player, ids.type, 1, '500.00', 'failed', 'insufficient_funds', null, null]);
  await db.query(
    `INSERT INTO chests.inventory_chests (id, app_id, player_id, chest_type_id, source, purchase_id) VALUES ($1, $2, $3, $4, 'purchased', $5)`,
    [ids.chest, ids.app, player, ids.type, ids.done],
  );
  const debit = `INSERT INTO chests.chest_debits (id, app_id, player_id, chest_id, currency, amount, status, purpose) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`;
  await db.query(debit, [ids.key, ids.app, player, ids.chest, 'vault_key', 1, 'pending', 'key']);
  await db.query(debit, [ids.keyDone, ids.app, player, ids.chest, 'vault_key', 1, 'completed', 'key']);
  await db.query(debit, [ids.skip, ids.app, player, ids.chest, 'gems', 60, 'pending', 'unlock_skip']);
  await db.query(debit, [ids.skipDone, ids.app, player, ids.chest, 'gems', 30, 'refunded', 'unlock_skip']);
  await db.query(debit, [ids.refunding, ids.app, player, ids.chest, 'gems', 20, 'refunding', 'unlock_skip']);
}

describe('migration 0012: purchases and chest debits become payments', () => {
  let db: pg.Client;
  let drop: () => Promise<void>;

  beforeAll(async () => {
    const created = await createTestDatabase(await testInfra());
    drop = created.drop;
    // The schema as 0011 left it, with rows in it; then the upgrade.
    const before = await mkdtemp(join(tmpdir(), 'chests-0011-'));
    try {
      for (const f of (await readdir(migrations)).filter((n) => n < '0012')) await copyFile(join(migrations, f), join(before, f));
      await migrateSchema(created.url, 'chests', before);
    } finally {
      await rm(before, { recursive: true, force: true });
    }
    db = new pg.Client({ connectionString: created.url });
    await db.connect();
    await seedCatalog(db);
    await seedOldPayments(db);
    // 0012 and whatever came after it.
    const applied = await migrateSchema(created.url, 'chests', migrations);
    expect(applied[0]).toBe('0012_payments');
    expect(applied.every((m) => m >= '0012')).toBe(true);
  });
  afterAll(async () => {
    await db?.end();
    await drop?.();
  });

  it('moves every row of both tables, in every state, and drops the old tables', async () => {
    const { rows } = await db.query(
      `SELECT id, kind, status, currency, amount::text, failure, chest_type_id, quantity, idempotency_key, answer, chest_id
         FROM chests.payments ORDER BY kind, amount, id`,
    );
    const byId = Object.fromEntries(rows.map((r) => [r.id, r]));
    expect(rows).toHaveLength(9);
    expect(byId[ids.done]).toMatchObject({ kind: 'purchase', status: 'completed', amount: '1000.00', quantity: 2, idempotency_key: 'key-1' });
    expect(byId[ids.done]).toMatchObject({ chest_type_id: ids.type, answer: { purchaseId: 'x' }, chest_id: null });
    expect(byId[ids.pend]).toMatchObject({ kind: 'purchase', status: 'pending', idempotency_key: 'key-2' });
    expect(byId[ids.deb]).toMatchObject({ kind: 'purchase', status: 'debited' });
    expect(byId[ids.comp]).toMatchObject({ kind: 'purchase', status: 'failed', failure: 'insufficient_funds' });
    expect(byId[ids.key]).toMatchObject({ kind: 'key', status: 'pending', currency: 'vault_key', amount: '1.00', chest_id: ids.chest });
    expect(byId[ids.keyDone]).toMatchObject({ kind: 'key', status: 'completed', chest_type_id: null, quantity: null });
    expect(byId[ids.skip]).toMatchObject({ kind: 'skip', status: 'pending', amount: '60.00' });
    expect(byId[ids.skipDone]).toMatchObject({ kind: 'skip', status: 'refunded' });
    // A chest debit being refunded is a payment being compensated: the sweeper finishes it.
    expect(byId[ids.refunding]).toMatchObject({ kind: 'skip', status: 'compensating' });
    const old = await db.query("SELECT to_regclass('chests.purchases') AS p, to_regclass('chests.chest_debits') AS d");
    expect(old.rows).toEqual([{ p: null, d: null }]);
  });

  it('keeps the uniqueness: one purchase per Idempotency-Key, one live skip per chest; bought chests name their payment', async () => {
    const insert = `INSERT INTO chests.payments (id, kind, app_id, player_id, currency, amount, status, chest_type_id, quantity, idempotency_key, chest_id)
                    VALUES ($1, $2, $3, $4, 'coins', 1, 'pending', $5, $6, $7, $8)`;
    await expect(db.query(insert, [randomUUID(), 'purchase', ids.app, player, ids.type, 1, 'key-1', null])).rejects.toMatchObject({
      constraint: 'payments_idempotency',
    });
    await expect(db.query(insert, [randomUUID(), 'skip', ids.app, player, null, null, null, ids.chest])).rejects.toMatchObject({
      constraint: 'payments_one_skip',
    });
    // A key payment of a chest with a live skip, and a skip of another chest, are fine.
    await db.query(insert, [randomUUID(), 'key', ids.app, player, null, null, null, ids.chest]);
    await db.query(insert, [randomUUID(), 'skip', ids.app, player, null, null, null, randomUUID()]);
    // Purchases carry their chest type, keys and skips their chest (and nothing of a purchase).
    await expect(db.query(insert, [randomUUID(), 'key', ids.app, player, ids.type, 1, null, ids.chest])).rejects.toMatchObject({
      constraint: 'payments_purchase_columns',
    });
    await expect(db.query('UPDATE chests.inventory_chests SET purchase_id = $2 WHERE id = $1', [ids.chest, randomUUID()])).rejects.toMatchObject({
      constraint: 'inventory_chests_purchase_id_fkey',
    });
  });
});

describe('the payments sweeper settles stale payments of every kind', () => {
  const content = readContentFile();
  const appId = randomUUID();
  const refunds: string[] = [];
  /** References the stand-in wallet debited (a refund of any other voids it). */
  const debited = new Set<string>();
  let tier: ServiceTier<ChestsConfig>;

  const wallet = [
    endpoint(DebitCurrency, async (req) => {
      debited.add(req.reference);
      return { currencyId: randomUUID(), currency: req.currency, balance: '0.00' };
    }),
    endpoint(RefundDebit, async (req) => {
      refunds.push(req.reference);
      return { outcome: debited.has(req.reference) ? ('refunded' as const) : ('unknown_reference' as const) };
    }),
  ];

  beforeAll(async () => {
    tier = await startServiceTier(chestsService, (env) => ChestsConfigSchema.parse(env), {
      responders: wallet,
      env: { PAYMENT_STALE_MS: '300', PAYMENT_SWEEP_INTERVAL_MS: '100' },
    });
    await tier.publish(AppContentLoaded, AppContentLoaded.payload.parse({ appId, version: 1, content }));
    for (let i = 0; ; i++) {
      const listed = await tier.bus
        .request(ListChestTypes, { sort: [], page: { limit: 100, offset: 0 } }, { requestId: 'c', appId })
        .catch(() => undefined);
      if (listed?.total) break;
      if (i > 100) throw new Error('the content never arrived');
      await new Promise((r) => setTimeout(r, 100));
    }
  });
  afterAll(async () => tier?.close());

  const statusOf = async (id: string) =>
    (await tier.service.deps.pool.query<{ status: string; failure: string | null }>('SELECT status, failure FROM payments WHERE id = $1', [id]))
      .rows[0];

  it('refunds a purchase and a key debit a crash left debited, and voids a skip never debited', async () => {
    const [purchase, key, skip] = [randomUUID(), randomUUID(), randomUUID()];
    // As if processes died right after the wallet's debit (the purchase, the key) or before asking it (the skip).
    debited.add(purchase).add(`key:${key}`);
    const pool = tier.service.deps.pool;
    await pool.query(
      `INSERT INTO payments (id, kind, app_id, player_id, currency, amount, status, chest_type_id, quantity)
       VALUES ($1, 'purchase', $2, $3, 'coins', 500, 'debited', $4, 1)`,
      [purchase, appId, player, chestTypeId(appId, 'wooden-chest')],
    );
    const chestDebit = `INSERT INTO payments (id, kind, app_id, player_id, currency, amount, status, chest_id) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`;
    await pool.query(chestDebit, [key, 'key', appId, player, 'vault_key', 1, 'debited', randomUUID()]);
    await pool.query(chestDebit, [skip, 'skip', appId, player, 'gems', 60, 'pending', randomUUID()]);
    // All three settled (the sweeper takes them one after the other: the purchase may be the last).
    const settled = async () =>
      (await statusOf(skip))!.status === 'failed' &&
      (await statusOf(key))!.status === 'refunded' &&
      (await statusOf(purchase))!.status === 'refunded';
    for (let i = 0; !(await settled()); i++) {
      if (i > 100) throw new Error('the sweeper never settled them');
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(await statusOf(purchase)).toEqual({ status: 'refunded', failure: 'interrupted' });
    expect(await statusOf(key)).toEqual({ status: 'refunded', failure: 'interrupted' });
    expect(await statusOf(skip)).toEqual({ status: 'failed', failure: 'interrupted' });
    // Each under its own reference, once.
    expect(refunds.filter((r) => [purchase, `key:${key}`, `unlock:${skip}`].includes(r)).sort()).toEqual(
      [purchase, `key:${key}`, `unlock:${skip}`].sort(),
    );
  });

  it('reads the sweep settings under their new names, else their former PURCHASE_* names', () => {
    expect(paymentSweep(tier.config)).toEqual({ everyMs: 100, staleMs: 300 });
    const former = ChestsConfigSchema.parse({ PURCHASE_SWEEP_INTERVAL_MS: '200', PURCHASE_STALE_MS: '500' });
    expect(paymentSweep(former)).toEqual({ everyMs: 200, staleMs: 500 });
    const both = ChestsConfigSchema.parse({ PAYMENT_STALE_MS: '700', PURCHASE_STALE_MS: '500' });
    expect(paymentSweep(both)).toEqual({ everyMs: 15_000, staleMs: 700 });
  });
});
