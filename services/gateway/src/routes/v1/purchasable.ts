import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError, GetPurchaseRestrictions } from '@ccs/shared';
import { callContext } from '../../lib/http.js';

/** Whether the compliance gate lets the caller spend each currency on random content. */
export interface Purchasable {
  /** A catalog chest's price currencies, each marked as purchasable by the caller or not (`meta.purchasable`). */
  (price: Record<string, number>): Record<string, boolean>;
  /** Whether the caller may spend `currency` on a key or a timer skip (`meta.requires_key.allowed`, `meta.unlock.skip_allowed`). */
  allowed(currency: string): boolean;
}

/**
 * For a caller with a Bearer token, what the catalog shows as each chest's `meta.purchasable`,
 * `meta.requires_key.allowed` and `meta.unlock.skip_allowed`: per currency, whether the one
 * compliance gate of paid random content lets this player spend it (not whether they can afford
 * it). Asked of chests in its own request, never through the reply cache, so the
 * catalog itself stays a content-only read shared by every caller; the answer is then private
 * (`cache-control: private, no-store`). Without a token there is no player to judge: undefined,
 * and the chests show none of them. When the restrictions cannot be read (players or
 * chests unavailable), the catalog is still answered, without it: a purchase checks the gates anyway.
 * The answer is kept per player (app.purchaseFlags, plugins/purchase-flags.ts), so a catalog read
 * costs no hop to chests and players: every replica forgets it when the player's profile or the
 * app's content changes (NATS notices), and after PURCHASE_FLAGS_TTL_MS in any case (a lost
 * notice). A kept answer is used only after this replica heard every notice routed to it before
 * the request (one PING round trip on its NATS connection, shared by the reads of one turn), so a
 * player who changed their profile through another replica reads the new flags at once. The
 * flags are advice.
 */
export async function purchasableFor(request: FastifyRequest, reply: FastifyReply): Promise<Purchasable | undefined> {
  if (!request.player) return undefined;
  reply.header('cache-control', 'private, no-store');
  try {
    const ctx = callContext(request);
    const memo = request.server.purchaseFlags;
    let refused = memo.get(ctx.appId!, request.player.id);
    if (refused) {
      // A profile change the player was answered before sending this request was announced first:
      // hear every notice routed here so far (one NATS round trip, shared), then read again.
      await request.server.bus.heardAll();
      refused = memo.get(ctx.appId!, request.player.id);
    }
    if (!refused) {
      const ticket = memo.ticket();
      const answer = await request.server.bus.request(GetPurchaseRestrictions, {}, ctx);
      memo.set(ctx.appId!, request.player.id, answer, ticket);
      refused = answer.refused;
    }
    const allowed = (currency: string) => refused[currency] === undefined;
    return Object.assign((price: Record<string, number>) => Object.fromEntries(Object.keys(price).map((c) => [c, allowed(c)])), { allowed });
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    request.log.warn({ code: err.code }, 'purchase restrictions unavailable; catalog without meta.purchasable');
    return undefined;
  }
}
