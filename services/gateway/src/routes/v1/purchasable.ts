import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError, GetPurchaseRestrictions } from '@ccs/shared';
import { callContext } from '../../lib/http.js';

/** Marks a catalog chest's price currencies as purchasable by the caller or not. */
export type Purchasable = (price: Record<string, number>) => Record<string, boolean>;

/**
 * For a caller with a Bearer token, what the catalog shows as each chest's `meta.purchasable`:
 * per price currency, whether the compliance gates let this player buy with it (not whether they
 * can afford it). Asked of chests in its own request, never through the reply cache, so the
 * catalog itself stays a content-only read shared by every caller; the answer is then private
 * (`cache-control: private, no-store`). Without a token there is no player to judge: undefined,
 * and the chests show no `meta.purchasable`. When the restrictions cannot be read (players or
 * chests unavailable), the catalog is still answered, without it: a purchase checks the gates anyway.
 */
export async function purchasableFor(request: FastifyRequest, reply: FastifyReply): Promise<Purchasable | undefined> {
  if (!request.player) return undefined;
  reply.header('cache-control', 'private, no-store');
  try {
    const { refused } = await request.server.bus.request(GetPurchaseRestrictions, {}, callContext(request));
    return (price) => Object.fromEntries(Object.keys(price).map((currency) => [currency, refused[currency] === undefined]));
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    request.log.warn({ code: err.code }, 'purchase restrictions unavailable; catalog without meta.purchasable');
    return undefined;
  }
}
