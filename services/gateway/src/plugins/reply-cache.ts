import fp from 'fastify-plugin';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import {
  ContentChanged,
  GetChestOdds,
  GetChestType,
  GetCollectible,
  GetCollection,
  ListChestTypes,
  ListCollectibles,
  ListCollectionCollectibles,
  ListCollections,
  type Bus,
  type ReplyOf,
  type RequestOf,
  type SubjectContract,
} from '@ccs/shared';
import { ReplyCache } from '../lib/reply-cache.js';
import { callContext } from '../lib/http.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** Recent replies to content-only reads (see contentRead). */
    replyCache: ReplyCache;
  }
}

/**
 * The reads whose replies depend on nothing but the app's content and the payload, and so may be
 * shared between callers: `any caller` when the reply never carries anything of the calling
 * player, `anonymous` when it does for a player (completeness, ownership, progress, all read fresh
 * for each player by collections) and is therefore shared only between calls without one.
 */
const SHARED_READS = new Map<SubjectContract, 'any caller' | 'anonymous'>([
  [ListChestTypes, 'any caller'],
  [GetChestType, 'any caller'],
  [GetChestOdds, 'any caller'],
  // With a player, the reply has when they completed each collection (collection rewards).
  [ListCollections, 'anonymous'],
  [ListCollectibles, 'any caller'],
  [GetCollection, 'anonymous'],
  [ListCollectionCollectibles, 'anonymous'],
  [GetCollectible, 'anonymous'],
]);

/**
 * A read of the app's content: the reply cached by this gateway when the contract allows it for
 * this caller (SHARED_READS) and REPLY_CACHE_TTL_MS is not 0, else one NATS request as any other.
 */
export function contentRead<C extends SubjectContract>(request: FastifyRequest, contract: C, payload: RequestOf<C>): Promise<ReplyOf<C>> {
  const ask = () => request.server.bus.request(contract, payload, callContext(request));
  const appId = request.tenant?.appId;
  const shared = SHARED_READS.get(contract);
  if (!appId || shared === undefined || (shared === 'anonymous' && request.player)) return ask();
  return request.server.replyCache.get(appId, contract.subject, payload, ask);
}

/**
 * The gateway's reply cache (lib/reply-cache.ts): every gateway listens to ContentChanged (a plain
 * subscription, so each one hears every notice) and forgets the app's replies at once.
 */
export default fp(
  async function replyCache(app: FastifyInstance, opts: { bus: Bus; ttlMs: number }) {
    const cache = new ReplyCache({ ttlMs: opts.ttlMs });
    app.decorate('replyCache', cache);
    if (!cache.enabled) return;
    const stopListening = opts.bus.listen(ContentChanged, ({ appId }) => cache.contentChanged(appId));
    app.addHook('onClose', async () => stopListening());
  },
  { name: 'reply-cache' },
);
