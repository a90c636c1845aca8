import { createHash, randomUUID } from 'node:crypto';
import { AdminGrantChests, ChestGrant, chestTypeId, enqueue, endpoint, withTransaction, type OutboxMessage } from '@ccs/shared';
import type { PlayersDeps } from '../deps.js';
import { currentChestSlugs } from '../repositories/apps-repository.js';
import { findPlayer } from '../repositories/players-repository.js';
import { recordStudioGrant } from '../repositories/studio-grants-repo.js';
import { playerErrors } from '../errors.js';

// Fixed namespace of studio grant ids (a random v4 chosen once for this project).
const NAMESPACE = Buffer.from('c3a94e1f7b2d4c8e9f05a6b1d2e3f470', 'hex');

/** A name-based UUID (version 5 layout): a grant's reference always gives the same chest ids. */
function grantUuid(name: string): string {
  const hash = createHash('sha1').update(NAMESPACE).update(name).digest();
  hash[6] = (hash[6]! & 0x0f) | 0x50;
  hash[8] = (hash[8]! & 0x3f) | 0x80;
  const hex = hash.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** The slug of the app's current chest type named by its slug or its catalog id; undefined when the content has none such. */
async function chestSlugOf(d: PlayersDeps, appId: string, chest: string): Promise<string | undefined> {
  const slugs = await currentChestSlugs(d.pool, appId);
  return slugs.find((slug) => slug === chest) ?? slugs.find((slug) => chestTypeId(appId, slug) === chest.toLowerCase());
}

/**
 * Operator command (`npm run admin -- grant-chests`, `POST /api/v1/admin/players/{id}/chests`):
 * chests of the app's current content (by slug or catalog id) for a player, written to the outbox
 * in one transaction with the player's check and published at once. Each message carries the
 * chest's own id; the chests service adds a chest id once (to the inventory or the mailbox), so a
 * grant repeated under the same reference, or a message delivered twice, adds nothing more. A
 * reference's grant is recorded (studio_chest_grants): repeated, it enqueues nothing and answers
 * `replayed`; the same reference for another chest type or quantity is 409 `reference_reused`.
 * Internal NATS only.
 */
export function adminGrantChestsEndpoint(d: PlayersDeps) {
  return endpoint(AdminGrantChests, async (req, ctx) => {
    const slug = await chestSlugOf(d, req.appId, req.chestTypeId);
    if (!slug) throw playerErrors.grantChestTypeNotFound(req.chestTypeId);
    const ids = Array.from({ length: req.quantity }, (_, i) =>
      req.reference ? grantUuid(`studio-grant:${req.appId.toLowerCase()}:${req.playerId.toLowerCase()}:${req.reference}:${i}`) : randomUUID(),
    );
    const messages = await withTransaction(d.pool, async (tx) => {
      if (!(await findPlayer(tx, req.appId, req.playerId))) throw playerErrors.grantPlayerNotFound(req.appId, req.playerId);
      if (req.reference) {
        const earlier = await recordStudioGrant(tx, { ...req, chestTypeId: slug, reference: req.reference });
        if (earlier && (earlier.chestTypeId !== slug || earlier.quantity !== req.quantity)) {
          throw playerErrors.grantReferenceReused(req.reference, earlier);
        }
        if (earlier) return undefined;
      }
      const out: OutboxMessage[] = [];
      for (const inventoryChestId of ids) {
        const payload = { appId: req.appId, playerId: req.playerId, inventoryChestId, chestTypeId: slug, source: 'special' as const };
        out.push(await enqueue(tx, ChestGrant, randomUUID(), payload, { ...ctx, appId: req.appId, playerId: req.playerId }));
      }
      return out;
    });
    if (!messages) return { playerId: req.playerId, chestType: slug, chests: ids, replayed: true };
    await d.relay.publishNow(messages).catch((err) => d.log.warn({ err: String(err) }, 'studio grant not published yet; the relay will'));
    d.log.info(
      { appId: req.appId, playerId: req.playerId, chestTypeId: slug, quantity: req.quantity, reference: req.reference },
      'chests granted by an operator',
    );
    return { playerId: req.playerId, chestType: slug, chests: ids, replayed: false };
  });
}
