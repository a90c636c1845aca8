import { AppError, type ComplianceRefusal, type SpendStanding } from '@ccs/shared';
import type { Banner } from './banners/banners.js';
import type { RequiredKey } from './repositories/chest-mechanics-repo.js';

/** The ways a player spends a paid currency on random content, all behind the one compliance gate (compliance/gate.ts). */
export type PaidUse = 'purchase' | 'key' | 'skip';

/** What is refused, in the player's words. */
const PAID_USE: Record<PaidUse, string> = {
  purchase: 'Chests bought with this currency',
  key: 'Chests opened with a key of this currency',
  skip: 'Timers skipped with this currency',
};

/** What a refused paid use tells the player (docs/content.md, "Compliance"); `meta.reason` lets a client ask for the missing attribute. */
const COMPLIANCE_DETAILS: Record<ComplianceRefusal['reason'], (what: string, minAge?: number) => string> = {
  country_blocked: (what) => `${what} are not available in your country.`,
  country_unknown: (what) => `${what} need your country: set \`country\` on your player first.`,
  under_min_age: (what, minAge) => `${what} are for players aged ${minAge ?? 'over the minimum age'} and over.`,
  birth_year_unknown: (what) => `${what} need your birth year: set \`birth_year\` on your player first.`,
};

/** The chests service's domain errors, with the stable codes clients and other services see. */
export const chestErrors = {
  chestTypeNotFound: () => AppError.notFound('chest_not_found', 'No chest with this id in the catalog.', { parameter: 'id' }),
  chestNotFound: () => AppError.notFound('chest_not_found', 'No chest with this id.', { parameter: 'id' }),
  chestNotOwned: () => AppError.forbidden('chest_not_owned', 'This chest belongs to another player.'),
  chestAlreadyOpened: () => AppError.forbidden('chest_already_opened', 'This chest has already been opened.'),
  idempotencyKeyReused: () =>
    AppError.conflict('idempotency_key_reused', 'This Idempotency-Key was already used to open another chest; use a new key.', {
      header: 'Idempotency-Key',
    }),
  batchKeyReused: () =>
    AppError.conflict('idempotency_key_reused', 'This Idempotency-Key was already used to open other chests; use a new key.', {
      header: 'Idempotency-Key',
    }),
  purchaseKeyReused: () =>
    AppError.conflict('idempotency_key_reused', 'This Idempotency-Key was already used for another purchase; use a new key.', {
      header: 'Idempotency-Key',
    }),
  purchaseKeyBusy: () =>
    AppError.conflict('idempotency_key_in_use', 'A purchase with this Idempotency-Key is being processed; retry shortly.', {
      header: 'Idempotency-Key',
    }),
  inventoryFull: (capacity: number) =>
    AppError.conflict('inventory_full', `The inventory holds at most ${capacity} unopened chests; open some first.`),
  mailboxItemNotFound: () =>
    AppError.notFound('mailbox_item_not_found', 'No chest with this id waits in your mailbox (unknown, or expired).', { parameter: 'id' }),
  mailboxItemClaimed: (chestId: string) =>
    new AppError({
      kind: 'conflict',
      code: 'mailbox_item_claimed',
      detail: `This chest was claimed already: it is chest ${chestId} of your inventory (unless opened since).`,
      meta: { chest_id: chestId },
    }),
  chestLocked: (unlocksAt: Date | null) =>
    new AppError({
      kind: 'forbidden',
      code: 'chest_locked',
      detail: unlocksAt
        ? `This chest is unlocking; it opens at ${unlocksAt.toISOString()} (or skip the wait: POST /api/v1/chests/{id}/unlock with skip_with).`
        : 'This chest is locked: start its timer with POST /api/v1/chests/{id}/unlock (or skip it with skip_with).',
      meta: { unlocks_at: unlocksAt ? unlocksAt.toISOString() : null },
    }),
  chestNotTimeLocked: () => AppError.conflict('chest_not_time_locked', 'This chest has no timer: open it directly (POST /api/v1/chests/{id}/open).'),
  unlockSlotBusy: (slots: number, nextFreeAt: Date | undefined) =>
    new AppError({
      kind: 'conflict',
      code: 'unlock_slot_busy',
      detail: `${slots === 1 ? 'Another chest is' : `${slots} chests are`} unlocking already; wait for ${slots === 1 ? 'it' : 'one'} to finish, or skip a timer.`,
      meta: { unlock_slots: slots, ...(nextFreeAt ? { next_free_at: nextFreeAt.toISOString() } : {}) },
    }),
  unlockSkipUnavailable: () => AppError.conflict('unlock_skip_unavailable', "This chest's timer cannot be skipped; it unlocks only by waiting."),
  skipCurrencyMismatch: (currency: string) =>
    new AppError({
      kind: 'invalid',
      code: 'skip_currency_mismatch',
      detail: `This chest's timer is skipped with ${currency}.`,
      source: { pointer: '/data/attributes/skip_with' },
      meta: { currency },
    }),
  unlockSkipInProgress: () =>
    AppError.conflict('unlock_skip_in_progress', "Another skip of this chest's timer is being paid; retry shortly to see the chest unlocked."),
  unlockInterrupted: () => AppError.unavailable('unlock_interrupted', 'The unlock was interrupted and the amount refunded; retry.'),
  priceUnavailable: (currency: string) =>
    AppError.unprocessable('price_unavailable', `This chest cannot be bought with ${currency}.`, { pointer: '/data/attributes/currency' }),
  contentUnavailable: () => AppError.unavailable('content_unavailable', "The app's content is not loaded yet. Retry shortly."),
  purchaseInterrupted: () =>
    AppError.unavailable('purchase_interrupted', 'The purchase could not be completed; any amount taken will be refunded. Retry shortly.'),
  inventoryDenied: (code: string) =>
    AppError.forbidden(
      code,
      {
        profile_private: "This player's inventory is private.",
        friends_only: "This player's inventory is visible to their confirmed friends only.",
        guest_forbidden: 'Guests and anonymous callers can only see their own inventory.',
      }[code] ?? "You may not see this player's inventory.",
    ),
  complianceRefused: (refusal: ComplianceRefusal, use: PaidUse) =>
    new AppError({
      kind: 'forbidden',
      code: refusal.code,
      detail: COMPLIANCE_DETAILS[refusal.reason](PAID_USE[use], refusal.minAge),
      meta: {
        reason: refusal.reason,
        ...(refusal.code === 'age_restricted' && refusal.minAge ? { min_age: refusal.minAge } : {}),
        // A rule pack's gate names its rule (docs/design.md §7): {pack, rule, source}.
        ...(refusal.rule ? { rule: refusal.rule } : {}),
      },
    }),
  /** A payment past one of the player's spend limits (docs/design.md §7): which, and when it resets. */
  spendLimitReached: (s: SpendStanding) =>
    new AppError({
      kind: 'forbidden',
      code: 'spend_limit_reached',
      detail:
        s.period === 'payment'
          ? `This is more than the ${s.limit} you may spend in one payment.`
          : `This would pass your spend limit of ${s.limit} a ${s.period} (${s.spent} spent); it resets at ${s.resetsAt}.`,
      meta: { limit: { period: s.period, limit: s.limit, spent: s.spent, resets_at: s.resetsAt }, ...(s.rule ? { rule: s.rule } : {}) },
    }),
  duplicateChest: (alsoAt: number | undefined) => AppError.unprocessable('duplicate_chest', `This chest is listed twice (also at ${alsoAt}).`),
  chestTypeNotLoaded: (named: string, appId: string) =>
    AppError.notFound('chest_not_found', `No chest type ${named} in app ${appId} (or its content is not loaded yet).`),
  openingContended: () =>
    AppError.unavailable(
      'opening_contended',
      "This player's openings are changing too fast to record this one; retry shortly (with the same Idempotency-Key).",
    ),
};

/**
 * What the wallet's 409 insufficient_funds says of a refused debit: `required` (what the debit
 * needed) and `balance` (what the player holds), decimal strings; passed on so a client can offer
 * the difference.
 */
function shortfallOf(walletError: AppError): { required?: unknown; balance?: unknown } {
  const meta = walletError.errors[0]?.meta ?? {};
  return { ...('required' in meta ? { required: meta.required } : {}), ...('balance' in meta ? { balance: meta.balance } : {}) };
}

/** Errors of the key and skip sagas (payments/key-saga.ts, payments/skip-saga.ts). */
export const keyErrors = {
  /**
   * The wallet refused a timer skip's debit: what the skip costs now (`amount`, and as the wallet
   * states it `required`) and the balance, so a client can offer a top-up.
   */
  skipInsufficientFunds: (currency: string, amount: number, walletError: AppError) =>
    new AppError({
      kind: 'conflict',
      code: 'insufficient_funds',
      detail: `Skipping this timer now costs ${amount} ${currency}, and the balance is too low.`,
      meta: { currency, amount, ...shortfallOf(walletError) },
    }),
  /** No key: the key the chest needs (`amount`, and as the wallet states it `required`) and the balance of its currency. */
  keyRequired: (key: RequiredKey, walletError: AppError) =>
    new AppError({
      kind: 'conflict',
      code: 'key_required',
      detail: `This chest needs ${key.amount} ${key.currency} to open, and the balance is too low.`,
      meta: { currency: key.currency, amount: key.amount, ...shortfallOf(walletError) },
    }),
  interrupted: () =>
    AppError.unavailable('opening_interrupted', 'The opening was interrupted and the key refunded; retry (with the same Idempotency-Key).'),
};

/** The banners' domain errors (docs/design.md §8). */
export const bannerErrors = {
  bannerNotFound: () => AppError.notFound('banner_not_found', 'No banner with this id.', { parameter: 'id' }),
  bannerNotActive: (b: Banner, now: Date) =>
    new AppError({
      kind: 'conflict',
      code: 'banner_not_active',
      detail:
        now < b.startsAt
          ? `This banner opens at ${b.content.starts_at}; pull it from then.`
          : `This banner ended at ${b.content.ends_at}; pull an active banner instead (GET /api/v1/banners).`,
      meta: { starts_at: b.content.starts_at, ends_at: b.content.ends_at },
    }),
  noSpark: () => AppError.conflict('spark_unavailable', 'This banner has no spark: nothing can be exchanged for its pulls.'),
  notFeatured: (b: Banner) =>
    new AppError({
      kind: 'invalid',
      code: 'not_featured',
      detail: `A spark takes one of the banner's featured collectibles: ${b.content.featured.collectibles.join(', ')}.`,
      source: { pointer: '/data/attributes/collectible_id' },
    }),
  sparkPointsInsufficient: (have: number, cost: number) =>
    new AppError({
      kind: 'conflict',
      code: 'spark_points_insufficient',
      detail: `A spark costs ${cost} points on this banner; you have ${have} in its pity group. Each pull on the group's banners adds one.`,
      meta: { spark_points: have, cost },
    }),
  sparkKeyReused: () =>
    AppError.conflict('idempotency_key_reused', 'This Idempotency-Key was already used for another spark; use a new key.', {
      header: 'Idempotency-Key',
    }),
};

/** Errors of the fairness, pity and verification operations. */
export const fairnessErrors = {
  rulesVersionNotFound: () =>
    AppError.notFound('rules_version_not_found', 'This chest has no rules of that content version.', { parameter: 'rules_version' }),
  openingNotFound: () => AppError.notFound('opening_not_found', 'You have no opening with this id.', { parameter: 'id' }),
  seedNotRevealed: () =>
    AppError.conflict(
      'seed_not_revealed',
      'The server seed of this opening is still in use; rotate it (POST /api/v1/players/me/fairness/rotate) to reveal it, then verify.',
    ),
  notVerifiable: () => AppError.conflict('opening_not_verifiable', 'This opening was made before verifiable randomness and cannot be recomputed.'),
};

/** The errors of a bounded simulation, with the codes clients see. */
export const simulationErrors = {
  busy: (retryAfterSeconds: number) =>
    AppError.rateLimited(
      'simulation_busy',
      'A simulation of this app is already running or waiting for its turn, and an app has one at a time: retry once it has finished (Retry-After).',
      retryAfterSeconds,
    ),
  overloaded: (retryAfterSeconds: number) =>
    AppError.overloaded('Too many simulations are running on this chests replica right now; nothing was done, retry shortly.', retryAfterSeconds),
  timeout: (timeoutMs: number) =>
    AppError.unavailable(
      'simulation_timeout',
      `The simulation did not finish within ${Math.round(timeoutMs / 1000)} s and was stopped; ask for fewer openings.`,
    ),
  lockUnavailable: () =>
    AppError.unavailable('service_unavailable', 'Postgres, which keeps one simulation per app at a time, is not reachable. Retry shortly.'),
};
