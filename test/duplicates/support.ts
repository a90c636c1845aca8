import { randomBytes, randomUUID } from 'node:crypto';
import { headers as natsHeaders } from 'nats';
import pg from 'pg';
import { expect } from 'vitest';
import {
  AdminCreateApp,
  AdminLoadContent,
  AppliedNotices,
  ChestGrant,
  encodeJson,
  NOTIFY_HEADER,
  OpeningGranted,
  prefixed,
  readContentFile,
  type AppContent,
  type DuplicatesRules,
} from '@ccs/shared';
import type { z } from 'zod';
import { eventually, jsonApiHeaders, type TestStack } from '../support/stack.js';
import { OPENINGS_CONSUMER } from '../../services/collections/src/consumers/opening-granted.js';

/** The collectibles of the tiny pool: one per rarity of the demo rarities. */
export const DUPE = { common: 'dupe-common', rare: 'dupe-rare', legendary: 'dupe-legendary' } as const;

/**
 * Content with a tiny pool, so duplicates come at once: one collection `dupes` with one collectible
 * per rarity, one chest `dupe-box` (the starter chest too) giving `items` of them (of `pool` only,
 * when given), and the given duplicate rules (the demo's currencies, rarities and player rules
 * otherwise).
 */
export function dupesContent(duplicates: DuplicatesRules | undefined, opts: { items?: number; pool?: string[] } = {}): AppContent {
  const base = readContentFile();
  return {
    currencies: base.currencies,
    rarities: base.rarities,
    players: { ...base.players, starter_chest_type: 'dupe-box', inventory_capacity: 1000 },
    collections: [
      {
        id: 'dupes',
        name: 'Dupes',
        description: 'A tiny pool.',
        collectibles: base.rarities.map((r) => ({ id: `dupe-${r.id}`, name: `Dupe ${r.name}`, description: '', images: [], rarity: r.id })),
      },
    ],
    chests: [
      {
        id: 'dupe-box',
        name: 'Dupe Box',
        description: 'Always the same few.',
        images: [],
        price: { coins: 100 },
        rules: {
          items: { fixed: opts.items ?? 3 },
          pools: [opts.pool ? { collectibles: opts.pool } : { collection: 'dupes' }],
          guarantees: [],
          bonus: [],
        },
      },
    ],
    ...(duplicates ? { duplicates } : {}),
  } as AppContent;
}

/** The demo-like rules of these tests: keep `max` copies, convert into coins. */
export const coinRules = (max: number, byRarity: Record<string, number> = { common: 20, rare: 60, legendary: 250 }): DuplicatesRules => ({
  max_copies: max,
  convert: { currency: 'coins', by_rarity: byRarity },
});

/** Creates an app with this content and waits until chests, wallet and collections have it. */
export async function createDupesApp(stack: TestStack, content: AppContent): Promise<{ appId: string; key: string }> {
  const created = await stack.bus.request(AdminCreateApp, { name: `Dupes ${randomBytes(3).toString('hex')}`, content }, { requestId: randomUUID() });
  const key = created.publishableKey;
  await eventually(async () => {
    for (const url of ['/api/v1/chests', '/api/v1/currencies', '/api/v1/collections']) {
      const res = await stack.inject({ method: 'GET', url, headers: jsonApiHeaders(key) });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().data.length).toBeGreaterThan(0);
    }
  }, 20_000);
  return { appId: created.appId, key };
}

/** Loads a new content version into an app; returns the version. */
export async function loadVersion(stack: TestStack, appId: string, content: AppContent): Promise<number> {
  return (await stack.bus.request(AdminLoadContent, { appId, content }, { requestId: randomUUID() })).version;
}

export type Granted = z.infer<typeof OpeningGranted.payload>;

/** An opening grant of the `dupes` pool, as chests would publish it (collectibles by rarity, in slot order). */
export function dupesGrant(appId: string, playerId: string, rarities: (keyof typeof DUPE)[], rulesVersion?: number): Granted {
  return {
    openingId: randomUUID(),
    appId,
    playerId,
    chestTypeId: 'dupe-box',
    openedAt: new Date().toISOString(),
    experience: 0,
    ...(rulesVersion ? { rulesVersion } : {}),
    items: rarities.map((r, slot) => ({ slot, collectibleId: DUPE[r], collectionId: 'dupes', rarity: r })),
  };
}

/**
 * Publishes grants as chests' relay does (message id = opening id, or `msgId`), asking for the
 * applied notices, and returns what collections' notices carried per opening id (within `waitMs`).
 */
export async function publishGrants(stack: TestStack, grants: Granted[], opts: { waitMs?: number; msgId?: (g: Granted) => string } = {}) {
  const notices = new AppliedNotices(stack.nc, stack.env.NATS_PREFIX!);
  try {
    const ids = grants.map((g) => opts.msgId?.(g) ?? g.openingId);
    const waiting = notices.expect(OPENINGS_CONSUMER, ids);
    for (const [i, g] of grants.entries()) {
      const h = natsHeaders();
      h.set('ccs-request-id', randomUUID());
      h.set(NOTIFY_HEADER, notices.subject);
      await stack.nc.jetstream().publish(prefixed(stack.env.NATS_PREFIX!, OpeningGranted.subject), encodeJson(g), { msgID: ids[i]!, headers: h });
    }
    const seen = await waiting.done(opts.waitMs ?? 15_000);
    return new Map(grants.map((g, i) => [g.openingId, seen.get(ids[i]!)]));
  } finally {
    notices.close();
  }
}

/** Grants `n` more `dupe-box` chests to a player through the durable chest grant, as an earned reward. */
export async function grantChests(stack: TestStack, appId: string, playerId: string, n: number): Promise<string[]> {
  const ids = Array.from({ length: n }, () => randomUUID());
  for (const id of ids) {
    const payload = ChestGrant.payload.parse({ appId, playerId, inventoryChestId: id, chestTypeId: 'dupe-box', source: 'earned' });
    await stack.nc.jetstream().publish(prefixed(stack.env.NATS_PREFIX!, ChestGrant.subject), encodeJson(payload), { msgID: randomUUID() });
  }
  await eventually(async () => {
    const rows = await sql(stack, 'SELECT id FROM chests.inventory_chests WHERE id = ANY($1::uuid[])', [ids]);
    expect(rows).toHaveLength(n);
  }, 20_000);
  return ids;
}

/** One query on the stack's database (every schema), for ground truth the API does not expose. */
export async function sql<T extends pg.QueryResultRow>(stack: TestStack, text: string, params: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: stack.env.DATABASE_URL });
  await client.connect();
  try {
    return (await client.query<T>(text, params)).rows;
  } finally {
    await client.end();
  }
}

/**
 * Ground truth of one player's duplicates, from every schema: each collectible's copies (tally
 * and kept rows), the converted slots, the conversion ledger rows and the coins balance against
 * its ledger sum.
 */
export async function duplicatesTruth(stack: TestStack, appId: string, playerId: string) {
  const [tallies, slots, ledger, coins] = await Promise.all([
    sql<{ collectible_id: string; copies: number; kept: number }>(
      stack,
      `SELECT pc.collectible_id, pc.copies,
              (SELECT count(*)::int FROM collections.owned_collectibles o
                WHERE o.player_id = pc.player_id AND o.collectible_id = pc.collectible_id AND o.converted_currency IS NULL) AS kept
         FROM collections.player_collectibles pc WHERE pc.app_id = $1 AND pc.player_id = $2 ORDER BY pc.collectible_id`,
      [appId, playerId],
    ),
    sql<{ opening_id: string; slot: number; rarity: string; currency: string; amount: number }>(
      stack,
      `SELECT opening_id, slot, rarity, converted_currency AS currency, converted_amount AS amount
         FROM collections.owned_collectibles WHERE app_id = $1 AND player_id = $2 AND converted_currency IS NOT NULL`,
      [appId, playerId],
    ),
    sql<{ reference: string; delta: string }>(
      stack,
      `SELECT reference, delta::text FROM wallet.ledger WHERE app_id = $1 AND player_id = $2 AND reason = 'duplicate_conversion'`,
      [appId, playerId],
    ),
    sql<{ balance: string | null; sum: string | null }>(
      stack,
      `SELECT (SELECT b.amount::text FROM wallet.balances b WHERE b.app_id = $1 AND b.player_id = $2 AND b.currency_id = c.id) AS balance,
              (SELECT sum(l.delta)::text FROM wallet.ledger l WHERE l.app_id = $1 AND l.player_id = $2 AND l.currency_id = c.id) AS sum
         FROM wallet.currencies c WHERE c.app_id = $1 AND c.code = 'coins'`,
      [appId, playerId],
    ),
  ]);
  return { tallies, slots, ledger, coins: coins[0]! };
}

/** The ledger reference of a converted slot, as collections writes it. */
export const slotReference = (openingId: string, slot: number) => `opening:${openingId}:slot:${slot}`;

/** Opens a chest through the gateway as a player of the app of `key` (the raw response). */
export function openChest(stack: TestStack, key: string, token: string, chestId: string, idempotencyKey?: string) {
  const headers: Record<string, string> = { ...jsonApiHeaders(key, token) };
  delete headers['content-type'];
  if (idempotencyKey) headers['idempotency-key'] = idempotencyKey;
  return stack.inject({ method: 'GET', url: `/api/v1/chests/${chestId}/open`, headers });
}

/** Waits until a player's chests are in their inventory (they arrive through durable grants). */
export async function waitForChests(stack: TestStack, key: string, token: string, ids: string[]): Promise<void> {
  await eventually(async () => {
    const res = await stack.inject({ method: 'GET', url: '/api/v1/players/me/chests?page[limit]=100', headers: jsonApiHeaders(key, token) });
    expect(res.statusCode, res.body).toBe(200);
    const have = new Set(res.json().data.map((c: { id: string }) => c.id));
    for (const id of ids) expect(have.has(id)).toBe(true);
  }, 20_000);
}

/**
 * The invariants of duplicate conversion for one player, from the ground truth: every tally equals
 * its kept rows and is at most `maxCopies`; kept plus converted is every granted item; exactly one
 * ledger row per converted slot with an amount, of that amount; the coins balance is its ledger
 * sum, `startCoins` plus the conversions. Returns the truth.
 */
export async function expectConvertedOnce(
  stack: TestStack,
  appId: string,
  playerId: string,
  opts: { maxCopies: number; items: number; startCoins: number },
) {
  const t = await duplicatesTruth(stack, appId, playerId);
  for (const c of t.tallies) {
    expect(c.copies, c.collectible_id).toBe(c.kept);
    expect(c.copies, c.collectible_id).toBeLessThanOrEqual(opts.maxCopies);
  }
  expect(t.tallies.reduce((n, c) => n + c.copies, 0) + t.slots.length).toBe(opts.items);
  const paid = t.slots.filter((s) => s.amount > 0);
  const expected = new Map(paid.map((s) => [slotReference(s.opening_id, s.slot), `${s.amount}.00`]));
  expect(t.ledger).toHaveLength(expected.size);
  expect(new Map(t.ledger.map((l) => [l.reference, l.delta]))).toEqual(expected);
  const credited = paid.reduce((n, s) => n + s.amount, 0);
  expect(t.coins).toEqual({ balance: (opts.startCoins + credited).toFixed(2), sum: (opts.startCoins + credited).toFixed(2) });
  return t;
}
