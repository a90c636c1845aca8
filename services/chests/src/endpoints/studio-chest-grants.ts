import { createHash, randomUUID } from 'node:crypto';
import { AdminGrantChests, AppError, ChestGrant, endpoint, enqueue, withTransaction, type OutboxMessage } from '@ccs/shared';
import type { ChestsDeps } from '../deps.js';
import { currentChestSlug, recordStudioChestGrant, type StudioChestGrant } from '../repositories/studio-chest-grants-repo.js';

// Fixed namespace of studio grant ids (a random v4 chosen once for this project): the same
// reference gives the same chest ids, whichever service recorded the grant.
const NAMESPACE = Buffer.from('c3a94e1f7b2d4c8e9f05a6b1d2e3f470', 'hex');

/** A name-based UUID (version 5 layout): a grant's reference always gives the same chest ids. */
function grantUuid(name: string): string {
  const hash = createHash('sha1').update(NAMESPACE).update(name).digest();
  hash[6] = (hash[6]! & 0x0f) | 0x50;
  hash[8] = (hash[8]! & 0x3f) | 0x80;
  const hex = hash.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** The refusals of a studio grant. */
const grantErrors = {
  chestTypeNotFound: (chest: string) =>
    AppError.unprocessable('chest_type_not_found', `The app's current content has no chest "${chest}": give its slug or catalog id.`, {
      pointer: '/data/attributes/chest_type',
    }),
  referenceReused: (reference: string, earlier: StudioChestGrant) =>
    AppError.conflict(
      'reference_reused',
      `Reference ${reference} already granted this player ${earlier.quantity} × ${earlier.chestTypeId}; a different grant needs a new reference.`,
    ),
};

/**
 * chests.v1.admin_grant_chests (`npm run admin -- grant-chests`, `POST /api/v1/admin/players/{id}/chests`):
 * chests of the app's current content (by slug or catalog id) for a player, written to the
 * outbox as ChestGrant messages (source `special`) in one transaction with the reference's record,
 * and published at once; this service's own grant consumer adds each to the inventory, or the
 * overflow mailbox when it is full. Each message carries the chest's own id, which the consumer
 * adds once, so a grant repeated under the same reference, or a message delivered twice, adds
 * nothing more. A reference's grant is recorded (studio_chest_grants): repeated, it enqueues
 * nothing and answers `replayed`; the same reference for another chest type or quantity is 409
 * `reference_reused`. The caller (the gateway's admin API, the admin CLI) has checked with
 * players that the player exists: chests knows no players.
 */
export function studioChestGrantsEndpoint(d: ChestsDeps) {
  return endpoint(AdminGrantChests, async (req, ctx) => {
    const slug = await currentChestSlug(d.pool, req.appId, req.chestTypeId);
    if (!slug) throw grantErrors.chestTypeNotFound(req.chestTypeId);
    const ids = Array.from({ length: req.quantity }, (_, i) =>
      req.reference ? grantUuid(`studio-grant:${req.appId.toLowerCase()}:${req.playerId.toLowerCase()}:${req.reference}:${i}`) : randomUUID(),
    );
    const messages = await withTransaction(d.pool, async (tx) => {
      if (req.reference) {
        const earlier = await recordStudioChestGrant(tx, { ...req, chestTypeId: slug, reference: req.reference });
        if (earlier && (earlier.chestTypeId !== slug || earlier.quantity !== req.quantity)) throw grantErrors.referenceReused(req.reference, earlier);
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
