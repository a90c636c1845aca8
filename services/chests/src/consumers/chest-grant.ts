import { ChestGrant, consumer, DURABLE, UuidSchema, type Delivery, type Queryable } from '@ccs/shared';
import type { z } from 'zod';
import type { ChestsDeps } from '../deps.js';
import { findChestType, findChestTypeBySlug } from '../repositories/chest-types-repo.js';
import { holdRevokedGrants } from '../repositories/revoked-chests-repo.js';

/** Durable name of the chests service's grant consumer. */
export const GRANT_CONSUMER = DURABLE.chestsGrants;

type Grant = z.infer<typeof ChestGrant.payload>;

/** What a grant needs of the app's current content: where a granted chest goes, and the starter type. */
export interface GrantRules {
  starterChestType: string;
  inventoryCapacity: number;
  inventoryOverflow: 'mailbox' | 'refuse';
  mailboxTtlDays: number;
}

/** A grant resolved to its chest type, in the order it was delivered. */
interface Placed {
  id: string;
  appId: string;
  playerId: string;
  chestTypeId: string;
  source: Grant['source'];
  rules: GrantRules;
}

/** The app's current content's grant rules, in one statement (not the whole snapshot: a grant needs four columns). */
export async function grantRules(db: Queryable, appId: string): Promise<GrantRules | undefined> {
  const r = await db.query<{ starter_chest_type: string; inventory_capacity: number; inventory_overflow: string; mailbox_ttl_days: number }>(
    `SELECT v.starter_chest_type, v.inventory_capacity, v.inventory_overflow, v.mailbox_ttl_days
       FROM apps a JOIN content_versions v ON v.app_id = a.app_id AND v.version = a.content_version
      WHERE a.app_id = $1 AND a.content_version > 0`,
    [appId],
  );
  const row = r.rows[0];
  if (!row) return undefined;
  return {
    starterChestType: row.starter_chest_type,
    inventoryCapacity: row.inventory_capacity,
    inventoryOverflow: row.inventory_overflow === 'mailbox' ? 'mailbox' : 'refuse',
    mailboxTtlDays: row.mailbox_ttl_days,
  };
}

const byKey = (a: { appId: string; playerId: string }, b: { appId: string; playerId: string }) =>
  a.appId < b.appId ? -1 : a.appId > b.appId ? 1 : a.playerId < b.playerId ? -1 : a.playerId > b.playerId ? 1 : 0;

/**
 * The inventory locks of the batch's players (the key `lockPlayerInventory` takes), in one
 * statement and in key order, so concurrent batches (other replicas) cannot deadlock on them.
 */
async function lockInventories(tx: Queryable, players: { appId: string; playerId: string }[]): Promise<void> {
  await tx.query(
    `SELECT pg_advisory_xact_lock(hashtextextended('chests-inventory:' || s.app_id || ':' || s.player_id, 0))
       FROM (SELECT app_id, player_id FROM unnest($1::text[], $2::text[]) AS t(app_id, player_id) ORDER BY app_id, player_id) s`,
    [players.map((p) => p.appId), players.map((p) => p.playerId)],
  );
}

/** The chest ids of `ids` already granted (in the inventory or the mailbox, opened or claimed or not). */
async function alreadyGranted(db: Queryable, ids: string[]): Promise<Set<string>> {
  const r = await db.query<{ id: string }>(
    'SELECT id FROM inventory_chests WHERE id = ANY($1::uuid[]) UNION ALL SELECT id FROM mailbox_items WHERE id = ANY($1::uuid[])',
    [ids],
  );
  return new Set(r.rows.map((row) => row.id.toLowerCase()));
}

/** Unopened chests per player (`app player` keys) of the given players. */
async function unopenedCounts(db: Queryable, players: { appId: string; playerId: string }[]): Promise<Map<string, number>> {
  const r = await db.query<{ app_id: string; player_id: string; n: number }>(
    `SELECT c.app_id, c.player_id, count(*)::int AS n
       FROM inventory_chests c JOIN unnest($1::uuid[], $2::uuid[]) AS p(app_id, player_id) ON c.app_id = p.app_id AND c.player_id = p.player_id
      WHERE c.opened_at IS NULL GROUP BY c.app_id, c.player_id`,
    [players.map((p) => p.appId), players.map((p) => p.playerId)],
  );
  return new Map(r.rows.map((row) => [`${row.app_id} ${row.player_id}`, row.n]));
}

async function insertChests(tx: Queryable, chests: Placed[]): Promise<void> {
  if (chests.length === 0) return;
  await tx.query(
    `INSERT INTO inventory_chests (id, app_id, player_id, chest_type_id, source)
     SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::uuid[], $5::text[]) ON CONFLICT (id) DO NOTHING`,
    [
      chests.map((c) => c.id),
      chests.map((c) => c.appId),
      chests.map((c) => c.playerId),
      chests.map((c) => c.chestTypeId),
      chests.map((c) => c.source),
    ],
  );
}

async function insertMailboxItems(tx: Queryable, items: Placed[]): Promise<void> {
  if (items.length === 0) return;
  await tx.query(
    `INSERT INTO mailbox_items (id, app_id, player_id, chest_type_id, source, expires_at)
     SELECT id, app_id, player_id, chest_type_id, source, now() + make_interval(days => ttl)
       FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::uuid[], $5::text[], $6::int[]) AS t(id, app_id, player_id, chest_type_id, source, ttl)
     ON CONFLICT (id) DO NOTHING`,
    [
      items.map((c) => c.id),
      items.map((c) => c.appId),
      items.map((c) => c.playerId),
      items.map((c) => c.chestTypeId),
      items.map((c) => c.source),
      items.map((c) => c.rules.mailboxTtlDays),
    ],
  );
}

/** Each grant's chest type (the message's id or slug, or the app's starter type), one lookup per distinct type. */
async function resolveGrants(tx: Queryable, batch: Delivery<Grant>[]): Promise<Placed[]> {
  const rulesOf = new Map<string, GrantRules>();
  const typeOf = new Map<string, string>();
  const placed: Placed[] = [];
  for (const { payload: msg } of batch) {
    let rules = rulesOf.get(msg.appId);
    if (!rules) {
      rules = await grantRules(tx, msg.appId);
      if (!rules) throw new Error(`no content for app ${msg.appId} yet`);
      rulesOf.set(msg.appId, rules);
    }
    const typeRef = msg.chestTypeId || rules.starterChestType;
    const key = `${msg.appId} ${typeRef}`;
    let typeId = typeOf.get(key);
    if (!typeId) {
      const type = UuidSchema.safeParse(typeRef).success
        ? await findChestType(tx, msg.appId, typeRef, { catalogOnly: false })
        : await findChestTypeBySlug(tx, msg.appId, typeRef);
      if (!type) throw new Error(`unknown chest type ${typeRef} in app ${msg.appId}`);
      typeId = type.id;
      typeOf.set(key, typeId);
    }
    placed.push({ id: msg.inventoryChestId, appId: msg.appId, playerId: msg.playerId, chestTypeId: typeId, source: msg.source, rules });
  }
  return placed;
}

/**
 * Applies chest grants (the starter chest of a registration, rewards, studio grants): adds each
 * chest with the id the sender chose, once, to the inventory or the overflow mailbox. The type is
 * the message's (id or slug) or the app's starter type. When the app's content has not arrived
 * yet the batch fails; the runtime then retries its grants one by one, later.
 *
 * Every grant pulled meanwhile is applied in ONE transaction (the runtime's, with the messages
 * marked processed in it), in a fixed number of statements whatever the batch's size: the content
 * rules per app, the chest type per distinct type, then the players' inventory locks (in key
 * order), the chest ids already granted, the chests a store refund revoked (not added, even when
 * the refund came first: docs/architecture.md "Store refunds"), the unopened counts (only when
 * some content sends overflow to the mailbox), and one insert for the inventory and one for the
 * mailbox. A chest goes to the mailbox when the inventory is full and `inventory_overflow` is
 * `mailbox`, counting the earlier grants of the batch; with `refuse` a grant is added beyond the
 * capacity: it cannot be refused after the fact, and must not be lost. Under the players' inventory locks, so claims and
 * purchases cannot change the counts meanwhile, and a second delivery of a grant (another message
 * id, even in the same batch) sees where the first one put it.
 */
export function chestGrantConsumer(_deps?: Pick<ChestsDeps, 'pool'>) {
  return consumer({
    durable: GRANT_CONSUMER,
    event: ChestGrant,
    batchSize: 100,
    async applyBatch(tx, batch) {
      const placed = await resolveGrants(tx, batch);
      const players = [...new Map(placed.map((c) => [`${c.appId} ${c.playerId}`, { appId: c.appId, playerId: c.playerId }])).values()].sort(byKey);
      await lockInventories(tx, players);
      const granted = await alreadyGranted(
        tx,
        placed.map((c) => c.id),
      );
      const unseen = placed.filter((c) => {
        const id = c.id.toLowerCase();
        if (granted.has(id)) return false;
        granted.add(id);
        return true;
      });
      // A chest a store refund revoked (even before its grant arrived) is not added.
      const revoked = await holdRevokedGrants(tx, unseen);
      const fresh = unseen.filter((c) => !revoked.has(c.id.toLowerCase()));
      const overflowing = fresh.filter((c) => c.rules.inventoryOverflow === 'mailbox');
      const counts = overflowing.length ? await unopenedCounts(tx, players) : new Map<string, number>();
      const inventory: Placed[] = [];
      const mailbox: Placed[] = [];
      for (const c of fresh) {
        const key = `${c.appId.toLowerCase()} ${c.playerId.toLowerCase()}`;
        const held = counts.get(key) ?? 0;
        if (c.rules.inventoryOverflow === 'mailbox' && held >= c.rules.inventoryCapacity) {
          mailbox.push(c);
          continue;
        }
        counts.set(key, held + 1);
        inventory.push(c);
      }
      await insertChests(tx, inventory);
      await insertMailboxItems(tx, mailbox);
    },
  });
}
