/**
 * The typed client of the Collectible Chest Service: `api` is an openapi-fetch client over the
 * types generated from the gateway's OpenAPI document (schema.ts), so every path, parameter, body
 * and answer is checked by the compiler. The client adds what every game client needs:
 * - the app's `apikey` on every call, and the player's access token once signed in;
 * - on a 401 for an expired or invalid access token, one refresh and one retry (concurrent calls
 *   share the refresh); the player is signed out only when the API refuses the refresh token
 *   itself, never for a refresh that failed for a while (429, 503, 504, the network);
 * - a bounded wait on `Retry-After` (429, 503) for the calls that are safe to repeat: GETs and
 *   POSTs with an `Idempotency-Key`;
 * - `Idempotency-Key`s for open, batch open, purchase, banner pull and spark, credit, dissolve,
 *   registration and guests, so a retry after a lost answer is safe;
 * - a named method for every player operation, answering the typed JSON:API document and throwing
 *   `ApiError` on a failure.
 */
import { unwrap, unwrapEmpty } from './errors.js';
import type { paths } from './schema.js';
import { ChestSession, type ChestClientOptions } from './session.js';

export type { components, paths } from './schema.js';
export { ApiError, type ApiErrorObject } from './errors.js';
export { ChestSession, type ChestClientOptions, type RetryOptions, type Tokens } from './session.js';

/** A fresh Idempotency-Key: send the same one again to retry a call whose answer was lost. */
export const newIdempotencyKey = (): string => crypto.randomUUID();

/** Options of a call that takes an Idempotency-Key (a new one when none is given). */
export interface Idempotent {
  idempotencyKey?: string;
}

/** A page of a list: `limit` items from `offset`. */
export interface Page {
  page?: { limit?: number; offset?: number };
}

/** The document a successful call of `M` on `P` answers (its 200 or 201 content). */
export type Ok<P extends keyof paths, M extends keyof paths[P]> = paths[P][M] extends { responses: infer R }
  ? R[Extract<keyof R, 200 | 201>] extends { content: infer C }
    ? C[keyof C]
    : never
  : never;

type Query<P extends keyof paths, M extends keyof paths[P]> = paths[P][M] extends { parameters: { query?: infer Q } } ? NonNullable<Q> : never;

const idempotencyHeader = (o: Idempotent) => ({ 'Idempotency-Key': o.idempotencyKey ?? newIdempotencyKey() });

/**
 * A store purchase to verify: an App Store transaction (StoreKit's `Transaction.jwsRepresentation`),
 * or a Google Play product id and the purchase token Play Billing gave the app.
 */
export type StoreReceipt = { platform: 'apple'; signedTransaction: string } | { platform: 'google'; productId: string; purchaseToken: string };

/** The client of one app for one player at a time: every player operation by name, failures thrown as ApiError. */
export class ChestClient extends ChestSession {
  // Players and sessions

  /** Registers a player and signs in as them; signed in as a guest, upgrades that guest (same id, chests and collection). */
  async register(
    email: string,
    password: string,
    o: Idempotent & { country?: string; birthYear?: number } = {},
  ): Promise<Ok<'/api/v1/players/register', 'post'>> {
    const attributes = { email, password, password_confirmation: password, country: o.country, birth_year: o.birthYear };
    const body = { data: { type: 'player' as const, attributes, relationships: {} } };
    return this.signedIn(unwrap(await this.api.POST('/api/v1/players/register', { params: { header: idempotencyHeader(o) }, body })));
  }

  /** Signs in with email and password. */
  async login(email: string, password: string): Promise<Ok<'/api/v1/players/login', 'post'>> {
    return this.signedIn(
      unwrap(await this.api.POST('/api/v1/players/login', { body: { data: { type: 'player', attributes: { email, password } } } })),
    );
  }

  /** Plays as a new guest (registering later keeps their progress); safe to retry with the same key (the same guest). */
  async guest(o: Idempotent = {}): Promise<Ok<'/api/v1/players/anonymous', 'post'>> {
    return this.signedIn(unwrap(await this.api.POST('/api/v1/players/anonymous', { params: { header: idempotencyHeader(o) } })));
  }

  /** Signs out: the session is revoked and the tokens forgotten (forgotten here even when the revocation fails). */
  async logout(): Promise<void> {
    const refresh_token = this.session?.refreshToken;
    try {
      await this.api.POST('/api/v1/players/logout', { body: { data: { type: 'session', attributes: refresh_token ? { refresh_token } : {} } } });
    } finally {
      this.setTokens(undefined);
    }
  }

  /** The signed-in player. */
  async me(query: Query<'/api/v1/players/me', 'get'> = {}): Promise<Ok<'/api/v1/players/me', 'get'>> {
    return unwrap(await this.api.GET('/api/v1/players/me', { params: { query } }));
  }

  /** Changes the player's privacy, country or birth year (at least one). */
  async updateMe(attributes: {
    privacy?: 'public' | 'private' | 'friends';
    country?: string;
    birth_year?: number;
  }): Promise<Ok<'/api/v1/players/me', 'patch'>> {
    return unwrap(await this.api.PATCH('/api/v1/players/me', { body: { data: { type: 'player', attributes } } }));
  }

  // Catalog and content

  /** The chest catalog (the first page of up to 100 unless `query` says otherwise). */
  async catalog(query: Query<'/api/v1/chests', 'get'> = {}): Promise<Ok<'/api/v1/chests', 'get'>> {
    return unwrap(await this.api.GET('/api/v1/chests', { params: { query: { page: { limit: 100, offset: 0 }, ...query } } }));
  }

  /** One catalog chest. */
  async chest(chestTypeId: string): Promise<Ok<'/api/v1/chests/{id}', 'get'>> {
    return unwrap(await this.api.GET('/api/v1/chests/{id}', { params: { path: { id: chestTypeId } } }));
  }

  /** A catalog chest's disclosed odds (with a session, the player's own for their next opening). */
  async odds(chestTypeId: string, query: Query<'/api/v1/chests/{id}/odds', 'get'> = {}): Promise<Ok<'/api/v1/chests/{id}/odds', 'get'>> {
    return unwrap(await this.api.GET('/api/v1/chests/{id}/odds', { params: { path: { id: chestTypeId }, query } }));
  }

  /** The app's collections. */
  async collections(query: Query<'/api/v1/collections', 'get'> = {}): Promise<Ok<'/api/v1/collections', 'get'>> {
    return unwrap(await this.api.GET('/api/v1/collections', { params: { query } }));
  }

  /** One collection (with a session, how much of it the player owns). */
  async collectionById(collectionId: string, query: Query<'/api/v1/collections/{id}', 'get'> = {}): Promise<Ok<'/api/v1/collections/{id}', 'get'>> {
    return unwrap(await this.api.GET('/api/v1/collections/{id}', { params: { path: { id: collectionId }, query } }));
  }

  /** A collection's collectibles. */
  async collectionCollectibles(
    collectionId: string,
    query: Query<'/api/v1/collections/{id}/collectibles', 'get'> = {},
  ): Promise<Ok<'/api/v1/collections/{id}/collectibles', 'get'>> {
    return unwrap(await this.api.GET('/api/v1/collections/{id}/collectibles', { params: { path: { id: collectionId }, query } }));
  }

  /** The app's collectibles. */
  async collectibles(query: Query<'/api/v1/collectibles', 'get'> = {}): Promise<Ok<'/api/v1/collectibles', 'get'>> {
    return unwrap(await this.api.GET('/api/v1/collectibles', { params: { query } }));
  }

  /** One collectible (with a session, whether the player owns it). */
  async collectible(collectibleId: string, query: Query<'/api/v1/collectibles/{id}', 'get'> = {}): Promise<Ok<'/api/v1/collectibles/{id}', 'get'>> {
    return unwrap(await this.api.GET('/api/v1/collectibles/{id}', { params: { path: { id: collectibleId }, query } }));
  }

  // Wallet

  /** The currencies, with the signed-in player's balances. */
  async currencies(): Promise<Ok<'/api/v1/currencies', 'get'>> {
    return unwrap(await this.api.GET('/api/v1/currencies', {}));
  }

  /** Credits the player's balance (plain JSON, as the spec has it); safe to retry with the same key. */
  async credit(currencyId: string, amount: string, o: Idempotent = {}): Promise<Ok<'/api/v1/currencies/{currency_id}/credit', 'post'>> {
    return unwrap(
      await this.api.POST('/api/v1/currencies/{currency_id}/credit', {
        params: { path: { currency_id: currencyId }, header: idempotencyHeader(o) },
        body: { amount },
        headers: { 'content-type': 'application/json' },
      }),
    );
  }

  // Chests

  /** Buys `quantity` chests of a catalog chest with a currency code; safe to retry with the same key. */
  async purchase(chestTypeId: string, currency: string, quantity = 1, o: Idempotent = {}): Promise<Ok<'/api/v1/chests/{id}/purchase', 'post'>> {
    return unwrap(
      await this.api.POST('/api/v1/chests/{id}/purchase', {
        params: { path: { id: chestTypeId }, header: idempotencyHeader(o) },
        body: { data: { type: 'purchase', attributes: { currency, quantity } } },
      }),
    );
  }

  /** The signed-in player's unopened chests (or another player's, as their privacy allows). */
  async inventory(query: Query<'/api/v1/players/{id}/chests', 'get'> = {}, playerId = 'me'): Promise<Ok<'/api/v1/players/{id}/chests', 'get'>> {
    return unwrap(await this.api.GET('/api/v1/players/{id}/chests', { params: { path: { id: playerId }, query } }));
  }

  /** Opens one of the player's chests; safe to retry with the same key (the same result comes back). */
  async open(chestId: string, o: Idempotent = {}): Promise<Ok<'/api/v1/chests/{id}/open', 'post'>> {
    return unwrap(await this.api.POST('/api/v1/chests/{id}/open', { params: { path: { id: chestId }, header: idempotencyHeader(o) } }));
  }

  /** Opens up to 50 of the player's chests, all or none; safe to retry with the same key. */
  async openMany(chestIds: string[], o: Idempotent = {}): Promise<Ok<'/api/v1/chests/open', 'post'>> {
    return unwrap(
      await this.api.POST('/api/v1/chests/open', {
        params: { header: idempotencyHeader(o) },
        body: { data: chestIds.map((id) => ({ type: 'chest' as const, id })) },
      }),
    );
  }

  /** Starts the timer of a time-locked chest (a running timer stays as it is). */
  async unlock(chestId: string): Promise<Ok<'/api/v1/chests/{id}/unlock', 'post'>> {
    return unwrap(await this.api.POST('/api/v1/chests/{id}/unlock', { params: { path: { id: chestId } } }));
  }

  /** Skips the timer of a time-locked chest, paying with a currency code (charged once, also when retried). */
  async skipUnlock(chestId: string, currency: string): Promise<Ok<'/api/v1/chests/{id}/unlock', 'post'>> {
    return unwrap(
      await this.api.POST('/api/v1/chests/{id}/unlock', {
        params: { path: { id: chestId } },
        body: { data: { type: 'unlock', attributes: { skip_with: currency } } },
      }),
    );
  }

  /** The chests waiting in the player's mailbox (granted while the inventory was full). */
  async mailbox(query: Page = {}): Promise<Ok<'/api/v1/players/me/mailbox', 'get'>> {
    return unwrap(await this.api.GET('/api/v1/players/me/mailbox', { params: { query } }));
  }

  /** Moves a chest from the mailbox into the inventory (a second claim: ApiError 409 `mailbox_item_claimed`). */
  async claimMailboxItem(itemId: string): Promise<Ok<'/api/v1/players/me/mailbox/{id}/claim', 'post'>> {
    return unwrap(await this.api.POST('/api/v1/players/me/mailbox/{id}/claim', { params: { path: { id: itemId } } }));
  }

  // Trading (docs/content.md, "Trading")

  /** Dissolves copies of a collectible into trade tokens; safe to retry with the same key (dissolved once). */
  async dissolve(
    collectibleId: string,
    quantity: number,
    o: Idempotent = {},
  ): Promise<Ok<'/api/v1/players/me/collection/{collectible_id}/dissolve', 'post'>> {
    return unwrap(
      await this.api.POST('/api/v1/players/me/collection/{collectible_id}/dissolve', {
        params: { path: { collectible_id: collectibleId }, header: idempotencyHeader(o) },
        body: { data: { type: 'dissolve', attributes: { quantity } } },
      }),
    );
  }

  /** Offers one copy of `give` to a player for one copy of `want` (the copy is held in escrow until the trade ends). */
  async offerTrade(partnerId: string, give: string, want: string): Promise<Ok<'/api/v1/trades', 'post'>> {
    return unwrap(
      await this.api.POST('/api/v1/trades', {
        body: { data: { type: 'trade', attributes: { give, want }, relationships: { partner: { data: { type: 'player', id: partnerId } } } } },
      }),
    );
  }

  /** Accepts a trade offered to the player: both copies change hands at once. */
  async acceptTrade(tradeId: string): Promise<Ok<'/api/v1/trades/{id}/accept', 'post'>> {
    return unwrap(await this.api.POST('/api/v1/trades/{id}/accept', { params: { path: { id: tradeId } } }));
  }

  /** Declines a trade offered to the player. */
  async declineTrade(tradeId: string): Promise<Ok<'/api/v1/trades/{id}/decline', 'post'>> {
    return unwrap(await this.api.POST('/api/v1/trades/{id}/decline', { params: { path: { id: tradeId } } }));
  }

  /** Cancels the player's own open offer. */
  async cancelTrade(tradeId: string): Promise<Ok<'/api/v1/trades/{id}/cancel', 'post'>> {
    return unwrap(await this.api.POST('/api/v1/trades/{id}/cancel', { params: { path: { id: tradeId } } }));
  }

  /** One trade of the player. */
  async trade(tradeId: string): Promise<Ok<'/api/v1/trades/{id}', 'get'>> {
    return unwrap(await this.api.GET('/api/v1/trades/{id}', { params: { path: { id: tradeId } } }));
  }

  /** The player's trades, newest first: `filter[role]` incoming or outgoing, `filter[state]`, pages. */
  async trades(query: Query<'/api/v1/trades', 'get'> = {}): Promise<Ok<'/api/v1/trades', 'get'>> {
    return unwrap(await this.api.GET('/api/v1/trades', { params: { query } }));
  }

  // Banners (gacha: a featured rate-up, a guarantee, a spark; docs/design.md §8)

  /** The app's active and coming banners (with a session, each with the player's standing in `meta.player`). */
  async listBanners(): Promise<Ok<'/api/v1/banners', 'get'>> {
    return unwrap(await this.api.GET('/api/v1/banners', {}));
  }

  /** One banner by its id (the content slug, e.g. `kraken-rising`), an ended one too. */
  async getBanner(bannerId: string): Promise<Ok<'/api/v1/banners/{id}', 'get'>> {
    return unwrap(await this.api.GET('/api/v1/banners/{id}', { params: { path: { id: bannerId } } }));
  }

  /** A banner's disclosed odds: the featured share, the guarantee, the spark, the expected pulls (with a session, from the player's standing). */
  async getBannerOdds(bannerId: string): Promise<Ok<'/api/v1/banners/{id}/odds', 'get'>> {
    return unwrap(await this.api.GET('/api/v1/banners/{id}/odds', { params: { path: { id: bannerId } } }));
  }

  /** Pulls a banner once or ten times with a currency code (paid and opened at once); safe to retry with the same key. */
  async pullBanner(
    bannerId: string,
    pull: { count: 1 | 10; currency: string },
    o: Idempotent = {},
  ): Promise<Ok<'/api/v1/banners/{id}/pull', 'post'>> {
    return unwrap(
      await this.api.POST('/api/v1/banners/{id}/pull', {
        params: { path: { id: bannerId }, header: idempotencyHeader(o) },
        body: { data: { type: 'pull', attributes: { count: pull.count, currency: pull.currency } } },
      }),
    );
  }

  /** Exchanges the banner's spark points for one of its featured collectibles; safe to retry with the same key (spent once). */
  async sparkBanner(bannerId: string, collectibleId: string, o: Idempotent = {}): Promise<Ok<'/api/v1/banners/{id}/spark', 'post'>> {
    return unwrap(
      await this.api.POST('/api/v1/banners/{id}/spark', {
        params: { path: { id: bannerId }, header: idempotencyHeader(o) },
        body: { data: { type: 'spark', attributes: { collectible_id: collectibleId } } },
      }),
    );
  }

  // Store purchases (App Store, Google Play)

  /**
   * Verifies a store purchase of the signed-in player and grants what its product gives, once per
   * store transaction. The answer's `data` is the purchase, `meta.grants` what it granted,
   * `meta.balances` the balances of the currencies granted and `meta.replayed` whether this
   * transaction was already granted to the player (nothing granted now). Refusals are ApiErrors
   * with the API's code (`receipt_invalid`, `transaction_claimed`, `purchase_pending`,
   * `store_unavailable`, …). Safe to send again: a transaction grants once.
   */
  async verifyPurchase(receipt: StoreReceipt): Promise<Ok<'/api/v1/players/me/store/purchases', 'post'>> {
    const attributes =
      receipt.platform === 'apple'
        ? { platform: 'apple' as const, signed_transaction: receipt.signedTransaction }
        : { platform: 'google' as const, product_id: receipt.productId, purchase_token: receipt.purchaseToken };
    return unwrap(await this.api.POST('/api/v1/players/me/store/purchases', { body: { data: { type: 'store_purchase', attributes } } }));
  }

  // Collection, history and fairness

  /** The signed-in player's collection. */
  async collection(query: Query<'/api/v1/players/me/collection', 'get'> = {}): Promise<Ok<'/api/v1/players/me/collection', 'get'>> {
    return unwrap(await this.api.GET('/api/v1/players/me/collection', { params: { query } }));
  }

  /** The player's openings, newest first. */
  async openings(query: Page = {}): Promise<Ok<'/api/v1/players/me/openings', 'get'>> {
    return unwrap(await this.api.GET('/api/v1/players/me/openings', { params: { query } }));
  }

  /** The player's pity counters. */
  async pity(): Promise<Ok<'/api/v1/players/me/pity', 'get'>> {
    return unwrap(await this.api.GET('/api/v1/players/me/pity', {}));
  }

  /** The player's seed pair: the committed server seed's hash, the client seed, the next nonce. */
  async fairness(): Promise<Ok<'/api/v1/players/me/fairness', 'get'>> {
    return unwrap(await this.api.GET('/api/v1/players/me/fairness', {}));
  }

  /** Starts a new seed pair with this client seed (the previous pair is revealed). */
  async setClientSeed(clientSeed: string): Promise<Ok<'/api/v1/players/me/fairness', 'patch'>> {
    return unwrap(
      await this.api.PATCH('/api/v1/players/me/fairness', { body: { data: { type: 'fairness', attributes: { client_seed: clientSeed } } } }),
    );
  }

  /** Reveals the current server seed (its openings become verifiable) and commits a new one. */
  async rotateSeed(): Promise<Ok<'/api/v1/players/me/fairness/rotate', 'post'>> {
    return unwrap(await this.api.POST('/api/v1/players/me/fairness/rotate', {}));
  }

  /** Recomputes one of the player's openings (once its seed pair is rotated) and says whether it matches. */
  async verifyOpening(openingId: string): Promise<Ok<'/api/v1/openings/{id}/verification', 'get'>> {
    return unwrap(await this.api.GET('/api/v1/openings/{id}/verification', { params: { path: { id: openingId } } }));
  }

  // Friends

  /** The player's friends and pending requests. */
  async friends(): Promise<Ok<'/api/v1/players/me/friends', 'get'>> {
    return unwrap(await this.api.GET('/api/v1/players/me/friends', {}));
  }

  /** Sends a friend request to a player (or confirms theirs). */
  async addFriend(playerId: string): Promise<Ok<'/api/v1/players/me/friends', 'post'>> {
    return unwrap(await this.api.POST('/api/v1/players/me/friends', { body: { data: { type: 'player', id: playerId } } }));
  }

  /** Ends a friendship or a pending request. */
  async removeFriend(playerId: string): Promise<void> {
    unwrapEmpty(await this.api.DELETE('/api/v1/players/me/friends/{id}', { params: { path: { id: playerId } } }));
  }
}

/** A client of one app; see ChestClient. */
export const createChestClient = (opts: ChestClientOptions): ChestClient => new ChestClient(opts);
