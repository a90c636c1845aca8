import { ChestGrant, consumer, DURABLE, UuidSchema, type Delivery, type Queryable } from '@ccs/shared';
import type { z } from 'zod';
import type { ChestsDeps } from '../deps.js';
import { findChestType, findChestTypeBySlug } from '../repositories/chest-types-repo.js';
import { grantRules, type GrantRules } from '../repositories/content-repo.js';
import { countUnopenedOf, insertGrantedChests, lockPlayerInventories } from '../repositories/inventory-repo.js';
import { grantedChestIds, insertMailboxItems } from '../repositories/mailbox-repo.js';
import { holdRevokedGrants } from '../repositories/revoked-chests-repo.js';

/** Durable name of the chests service's grant consumer. */
const GRANT_CONSUMER = DURABLE.chestsGrants;

type Grant = z.infer<typeof ChestGrant.payload>;

/** A grant resolved to its chest type, in the order it was delivered. */
interface Placed {
  id: string;
  appId: string;
  playerId: string;
  chestTypeId: string;
  source: Grant['source'];
  rules: GrantRules;
}

const byKey = (a: { appId: string; playerId: string }, b: { appId: string; playerId: string }) =>
  a.appId < b.appId ? -1 : a.appId > b.appId ? 1 : a.playerId < b.playerId ? -1 : a.playerId > b.playerId ? 1 : 0;

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
      await lockPlayerInventories(tx, players);
      const granted = await grantedChestIds(
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
      const counts = overflowing.length ? await countUnopenedOf(tx, players) : new Map<string, number>();
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
      await insertGrantedChests(tx, inventory);
      await insertMailboxItems(
        tx,
        mailbox.map((c) => ({ ...c, ttlDays: c.rules.mailboxTtlDays })),
      );
    },
  });
}
