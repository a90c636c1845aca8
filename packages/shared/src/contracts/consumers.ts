/**
 * Durable JetStream consumer names. A request that waits for another service to apply its
 * messages (read-your-writes, `publishAndAwait`) names that service's consumer, so the names are
 * part of the contracts: the consuming service and the waiting one read them from here.
 */
export const DURABLE = {
  /** collections: applies opening grants to the collections (chests waits for it). */
  collectionsOpenings: 'collections-openings',
  /** collections: adds the collectibles of spark exchanges (chests waits for it). */
  collectionsSparks: 'collections-sparks',
  /** wallet: applies credit grants (players waits for it at registration). */
  walletCreditGrants: 'wallet-credit-grants',
  /** players: adds the experience of openings. */
  playersExperience: 'players-experience',
  /** chests: adds granted chests to inventories or mailboxes. */
  chestsGrants: 'chests-grants',
  /** Each service's copy of an app's content. */
  chestsContent: 'chests-content',
  walletContent: 'wallet-app-content',
  /** store: the app's store products and compliance. */
  storeContent: 'store-app-content',
  /** wallet: takes back (or gives again) the currencies of a store refund (store waits for it). */
  walletStoreRefunds: 'wallet-store-refunds',
  /** chests: revokes (or restores) the unopened chests of a store refund. */
  chestsStoreRefunds: 'chests-store-refunds',
  /** egress: fans the domain events (grants.events) out to the app's webhook endpoints. */
  webhookEvents: 'egress-webhook-events',
  /** egress: fans chest openings (their grants) out to the app's webhook endpoints as chest.opened. */
  webhookOpenings: 'egress-webhook-openings',
  /** egress: fans spark exchanges (their grants) out to the app's webhook endpoints as banner.sparked. */
  webhookSparks: 'egress-webhook-sparks',
} as const;

/**
 * Durables that were renamed, each with the one that replaces it (same service, same filter). The
 * service creates the new one where the old one has acknowledged everything before it (its ack
 * floor), then deletes the old one once no replica pulls from it any more, so no message is
 * skipped; one acknowledged past the floor comes again and is applied once, by its key
 * (`processedId`). See egress's `consumers/durable-handover.ts`.
 */
export const RETIRED_DURABLES: Readonly<Record<string, string>> = {
  'players-webhook-events': DURABLE.webhookEvents,
  'players-webhook-openings': DURABLE.webhookOpenings,
};
