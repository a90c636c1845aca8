import type { FastifyRequest } from 'fastify';
import { baseUrl } from '../../lib/http.js';

/**
 * Resource-level `links.self`: the canonical URL of a resource, absolute on the same base as a
 * document's top-level links, where a GET answers that resource as its primary data. Only the
 * resource types below have one; a resource that no GET serves on its own (an inventory chest, a
 * currency, a friend, a mailbox item, an opening in the history, ...) carries no `links`, since a
 * self link must be fetchable (docs/guide.md, "Resource links", lists which and why).
 */
export interface ResourceLinks {
  self: string;
}

/** The absolute base of every link in a request's documents: PUBLIC_BASE_URL, else the request's own host. */
export const linkBase = (request: FastifyRequest): string => baseUrl(request, request.server.gatewayConfig.PUBLIC_BASE_URL);

const at = (base: string, path: string): ResourceLinks => ({ self: `${base}${path}` });
const seg = (id: string) => encodeURIComponent(id);
/** An earlier rules version asked for, so the link names the odds shown, not the current ones. */
const rulesVersionQuery = (rulesVersion: number | undefined) => (rulesVersion === undefined ? '' : `?rules_version=${rulesVersion}`);

/** The canonical URL of each resource type that has one, by its id. */
export const selfLinks = {
  /** A catalog chest (a chest type). */
  chest: (base: string, id: string) => at(base, `/api/v1/chests/${seg(id)}`),
  /** A trade, for its two players. */
  trade: (base: string, id: string) => at(base, `/api/v1/trades/${seg(id)}`),
  chestOdds: (base: string, id: string, rulesVersion?: number) => at(base, `/api/v1/chests/${seg(id)}/odds${rulesVersionQuery(rulesVersion)}`),
  chestObservedOdds: (base: string, id: string, rulesVersion?: number) =>
    at(base, `/api/v1/chests/${seg(id)}/odds/observed${rulesVersionQuery(rulesVersion)}`),
  collection: (base: string, id: string) => at(base, `/api/v1/collections/${seg(id)}`),
  collectible: (base: string, id: string) => at(base, `/api/v1/collectibles/${seg(id)}`),
  banner: (base: string, id: string) => at(base, `/api/v1/banners/${seg(id)}`),
  bannerOdds: (base: string, id: string) => at(base, `/api/v1/banners/${seg(id)}/odds`),
  /** The player, at the URL only that player may read and update (`/players/me` is the same resource). */
  player: (base: string, id: string) => at(base, `/api/v1/players/${seg(id)}`),
  /** The calling player's seed pair: one per player, only ever the caller's own. */
  fairness: (base: string) => at(base, '/api/v1/players/me/fairness'),
  openingVerification: (base: string, openingId: string) => at(base, `/api/v1/openings/${seg(openingId)}/verification`),
  /** The admin API's resources (the studio's secret key reads them). */
  appOverview: (base: string) => at(base, '/api/v1/admin/overview'),
  adminPlayer: (base: string, id: string) => at(base, `/api/v1/admin/players/${seg(id)}`),
  chestDrops: (base: string, chestTypeId: string) => at(base, `/api/v1/admin/chests/${seg(chestTypeId)}/drops`),
  bannerStats: (base: string, id: string) => at(base, `/api/v1/admin/banners/${seg(id)}/stats`),
};
