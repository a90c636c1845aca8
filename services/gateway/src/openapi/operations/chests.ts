import { z } from 'zod';
import { ChestCatalogDocument, ChestDocument, UnlockDocument, InventoryDocument, PurchaseDocument } from '../../resources/chests.js';
import { ChestOddsDocument, ObservedOddsDocument, OddsLogDocument } from '../../resources/chest-odds.js';
import { ChestOpeningBatchResult, ChestOpeningResult, ChestOpeningsDocument } from '../../resources/openings.js';
import { variantOf, type OperationDoc } from '../route-doc.js';
import {
  idempotencyKeyHeader,
  IN_DEBT_403,
  INSUFFICIENT_FUNDS,
  INVALID_ID,
  INVALID_IDEMPOTENCY_KEY,
  NO_STORE_HEADER,
  PlayerIdOrMe,
  REPLAYED_HEADER,
  uuidParam,
} from './common.js';

/** Documentation of the chest catalog, odds, opening, purchase, inventories and openings. */

const catalogChestId = { id: uuidParam('A catalog chest (chest type).') };
const unknownCatalogChest = 'no such chest in the catalog of this app (`chest_not_found`)';
const PURCHASABLE_NOTE =
  " With a Bearer token, each chest's `meta.purchasable` says per price currency whether the app's compliance rules (region, age) let the caller buy with it, and `meta.requires_key.allowed` and `meta.unlock.skip_allowed` whether they let the caller open it with its key and skip its timer; that answer is private and never in the shared cache. A change of the caller's country or birth year (theirs or the studio's) shows in it from the change's answer on, through any gateway, and a content load as soon as the new catalog does; only if a gateway missed the change's notice may it lag, by at most `PURCHASE_FLAGS_TTL_MS` (5 s). The purchase itself always applies the rules.";
/** The catalog's answers are private when they carry the caller's `meta.purchasable`. */
const PRIVATE_WITH_TOKEN = {
  'cache-control': {
    description: "`private, no-store` with a Bearer token (the answer carries the caller's `meta.purchasable`); absent otherwise.",
    schema: z.string(),
  },
};

/** GET /api/v1/chests. */
export const listChests: OperationDoc = {
  operationId: 'listChests',
  tag: 'Chests',
  summary: 'The chest catalog',
  description: "The app's catalog: filtered, sorted and paginated. Each chest's price per currency code is in its `meta.price`." + PURCHASABLE_NOTE,
  token: 'optional',
  responses: [{ status: 200, description: 'A page of the catalog.', schema: ChestCatalogDocument, headers: PRIVATE_WITH_TOKEN }],
};

const PAID_GATE_403 = (what: string) =>
  `${what} with a paid currency of the app's compliance rules, and the player's country is blocked or not declared (\`blocked_in_region\`, \`meta.reason\` \`country_blocked\` or \`country_unknown\`), or the player is under the minimum age or has not declared a birth year (\`age_restricted\`, \`meta.reason\` \`under_min_age\` or \`birth_year_unknown\`, \`meta.min_age\`), or the amount would pass one of the player's spend limits (\`spend_limit_reached\`, \`meta.limit\` = \`{period, limit, spent, resets_at}\`, \`period\` \`day\`, \`month\` or \`payment\`; GET /api/v1/players/me/limits); a refusal that a rule pack's rule causes names it (\`meta.rule\` = \`{pack, rule, source}\`); nothing is debited`;

/** GET /api/v1/chests/{id}. */
export const getChest: OperationDoc = {
  operationId: 'getChest',
  tag: 'Chests',
  summary: 'One catalog chest',
  description: 'One chest of the catalog, its price per currency code in `meta.price`.' + PURCHASABLE_NOTE,
  token: 'optional',
  params: catalogChestId,
  responses: [{ status: 200, description: 'The chest.', schema: ChestDocument, headers: PRIVATE_WITH_TOKEN }],
  errors: { 400: [INVALID_ID], 404: [unknownCatalogChest] },
};

/** GET /api/v1/chests/{id}/odds. */
export const getChestOdds: OperationDoc = {
  operationId: 'getChestOdds',
  tag: 'Chests',
  summary: 'The exact odds of a chest',
  description:
    'Odds disclosure (app stores and several jurisdictions require it): items per opening, the share of each rarity and of each collectible among the items, computed from the rules the roll uses. ' +
    "It also publishes those rules, the pity rule with the long-run shares it gives, and the duplicate rules. `rules_version` asks for an earlier content version's rules (an opening records the version it used). " +
    "With a Bearer token, `meta.player` holds the caller's odds for their next opening, pity applied (never cached).",
  token: 'optional',
  params: catalogChestId,
  responses: [{ status: 200, description: 'The odds.', schema: ChestOddsDocument }],
  errors: {
    400: [INVALID_ID, 'a `rules_version` that is not a content version number (`invalid_parameter`)'],
    404: [unknownCatalogChest, 'the chest has no rules of that `rules_version` (`rules_version_not_found`)'],
  },
};

/** GET /api/v1/odds-log (docs/design.md §7). */
export const listOddsLog: OperationDoc = {
  operationId: 'listOddsLog',
  tag: 'Chests',
  summary: "The odds log: every change of a chest's rules, hash-chained",
  description:
    "The app's append-only odds log (docs/design.md §7), oldest first: each content version that changes a chest type's rules appends one entry for it, chained by SHA-256 to the entry before, so history cannot be rewritten unseen. " +
    'Anyone with the API key can recompute every `entry_hash` and each `rules_sha256` from the odds endpoint (`GET /chests/{id}/odds?rules_version=`). Pages of at most 100.',
  token: 'optional',
  responses: [{ status: 200, description: 'A page of the log.', schema: OddsLogDocument, headers: NO_STORE_HEADER }],
  errors: { 400: ['a malformed `page[limit]` or `page[offset]` (`invalid_parameter`)'] },
};

/** GET /api/v1/chests/{id}/odds/observed (docs/design.md §7). */
export const getObservedOdds: OperationDoc = {
  operationId: 'getObservedOdds',
  tag: 'Chests',
  summary: 'What real openings of a chest drew, against its odds',
  description:
    "Observed odds in public (docs/design.md §7): per rarity, the share the rules disclosed, and the count and share drawn in this app's real openings under those rules, with a chi-square p-value, so anyone can check that the draws follow the disclosure. " +
    '`rules_version` asks for an earlier content version (an opening records the version it used); by default the current one. Banner pulls of the chest are not counted (their featured rate-up and ten-pull floor are another draw). Aggregates only; never cached.',
  token: 'optional',
  params: catalogChestId,
  responses: [{ status: 200, description: 'The observed odds.', schema: ObservedOddsDocument, headers: NO_STORE_HEADER }],
  errors: {
    400: [INVALID_ID, 'a `rules_version` that is not a content version number (`invalid_parameter`)'],
    404: [unknownCatalogChest, 'the chest has no rules of that `rules_version` (`rules_version_not_found`)'],
  },
};

/** GET /api/v1/chests/{id}/open (the spec's method). */
export const openChest: OperationDoc = {
  operationId: 'openChest',
  tag: 'Chests',
  summary: 'Open a chest',
  description:
    'Consumes an unopened chest of the calling player and rolls its collectibles, which are added to their collection; cannot be undone. ' +
    'The path id is an inventory chest (from `/players/me/chests`, or the `starter_chest` of registration), not a catalog chest. ' +
    'GET as the spec shows; never cached.',
  token: 'required',
  params: { id: uuidParam("One of the calling player's chests (inventory id).") },
  headers: idempotencyKeyHeader('the first result'),
  responses: [
    {
      status: 200,
      description: 'Opened: the chest-opening result.',
      schema: ChestOpeningResult,
      headers: { ...NO_STORE_HEADER, ...REPLAYED_HEADER },
    },
  ],
  errors: {
    400: [INVALID_ID, INVALID_IDEMPOTENCY_KEY],
    403: [
      'a chest of another player (`chest_not_owned`)',
      'a chest already opened (`chest_already_opened`)',
      'a time-locked chest not unlocked yet (`chest_locked`, `meta.unlocks_at`: when its timer ends, null when it has not started)',
      PAID_GATE_403('a chest whose key is'),
      `a key-required chest whose key currency is owed: ${IN_DEBT_403}`,
    ],
    404: ['no such chest in this app (`chest_not_found`)'],
    409: [
      'the Idempotency-Key was used to open another chest (`idempotency_key_reused`)',
      `a key-required chest and too few keys (\`key_required\`, the key in \`meta.amount\`; ${INSUFFICIENT_FUNDS})`,
    ],
  },
};

/** POST /api/v1/chests/open. */
export const openChests: OperationDoc = {
  operationId: 'openChests',
  tag: 'Chests',
  summary: 'Open several chests at once',
  description:
    "Opens up to 50 of the calling player's chests, in the order given, all or nothing: if one cannot be opened, the answer is that chest's error (`source.pointer` `/data/<index>/id`) and none is opened. " +
    'One write and one grant per opening, so a batch costs less than as many single opens; each opening is recorded, verifiable and pity-counted as a single one is. A key-required chest takes its own key, debited with the batch and refunded if the batch does not open. Never cached.',
  token: 'required',
  headers: idempotencyKeyHeader('the first batch (the same chests in the same order)'),
  bodyExample: {
    data: [
      { type: 'chest', id: '3f2b6c1e-8a4d-4f7b-9c2e-5d1a0b7e6f43' },
      { type: 'chest', id: '9a1d2c3b-4e5f-4a6b-8c7d-0e1f2a3b4c5d' },
    ],
  },
  responses: [
    {
      status: 200,
      description: 'Opened: one chest-opening result per chest, in order.',
      schema: ChestOpeningBatchResult,
      headers: { ...NO_STORE_HEADER, ...REPLAYED_HEADER },
    },
  ],
  errors: {
    400: [INVALID_IDEMPOTENCY_KEY],
    403: [
      'a chest of another player (`chest_not_owned`), already opened (`chest_already_opened`), or time-locked (`chest_locked`), pointed at',
      `${PAID_GATE_403('a key-required chest whose key is paid for')}, pointed at`,
      `a key-required chest whose key currency is owed, pointed at: ${IN_DEBT_403}; keys taken for the batch are refunded`,
    ],
    404: ['no such chest in this app (`chest_not_found`), pointed at'],
    409: [
      'the Idempotency-Key was used to open other chests (`idempotency_key_reused`)',
      `a key-required chest and too few keys (\`key_required\`, the key in \`meta.amount\`; ${INSUFFICIENT_FUNDS}), pointed at; keys taken for the batch are refunded`,
    ],
    422: [
      'no chest, more than 50, an entry that is not `{type: "chest", id: <uuid>}` (ids in any case), or a chest listed twice (`duplicate_chest`)',
    ],
    503: ["the player's openings changed too fast to record this batch (`opening_contended`); retry with the same Idempotency-Key"],
  },
};

/** POST /api/v1/chests/{id}/open. */
export const openChestPost = variantOf(
  openChest,
  'openChestPost',
  'POST does the same as GET, for clients and proxies that must not send side effects on GET. No body is needed.',
);

/** POST /api/v1/chests/{id}/unlock. */
export const unlockChest: OperationDoc = {
  operationId: 'unlockChest',
  tag: 'Chests',
  summary: 'Start or skip the timer of a time-locked chest',
  description:
    'A time-locked chest opens only once unlocked (docs/content.md, "Time-locked chests"). With no body, this starts its timer: at most `players.unlock_slots` chests of a player unlock at once. ' +
    'With `{data: {type: "unlock", attributes: {skip_with: <currency>}}}` it pays `ceil(remaining minutes × per_minute)` of the chest\'s skip currency (the whole timer when it has not started) and unlocks it at once; ' +
    'if the unlock cannot complete, the amount is refunded. A paid skip currency passes the compliance gate of paid random content first (as a purchase does). ' +
    'Concurrent skips of one chest charge once: the others wait for it and answer the chest unlocked, with nothing charged. ' +
    'Safe to retry: a running timer stays as it is, and an unlocked chest is answered as it is, with nothing charged. Never cached.',
  token: 'required',
  params: { id: uuidParam("One of the calling player's chests (inventory id).") },
  bodyExample: { data: { type: 'unlock', attributes: { skip_with: 'gems' } } },
  responses: [{ status: 200, description: 'Its timer runs, or it is unlocked.', schema: UnlockDocument, headers: NO_STORE_HEADER }],
  errors: {
    400: [INVALID_ID],
    403: [
      'a chest of another player (`chest_not_owned`)',
      'a chest already opened (`chest_already_opened`)',
      PAID_GATE_403('a skip'),
      `the skip currency is owed: ${IN_DEBT_403}`,
    ],
    404: ['no such chest in this app (`chest_not_found`)'],
    409: [
      'another skip of this chest is being paid and did not settle within 10 seconds (`unlock_skip_in_progress`); retry',
      'the chest has no timer (`chest_not_time_locked`)',
      'every unlock slot is busy (`unlock_slot_busy`, `meta.unlock_slots`, `meta.next_free_at`)',
      'the timer cannot be skipped (`unlock_skip_unavailable`)',
      `the balance is too low for the skip (\`insufficient_funds\`, what it costs now in \`meta.amount\`; ${INSUFFICIENT_FUNDS})`,
    ],
    422: [
      'a body that is not `{data: {type: "unlock", attributes: {skip_with: <currency code>}}}`',
      "a skip currency other than the chest's (`skip_currency_mismatch`, `meta.currency`)",
    ],
    503: ['the skip was interrupted and refunded (`unlock_interrupted`); retry'],
  },
};

/** POST /api/v1/chests/{id}/purchase. */
export const purchaseChests: OperationDoc = {
  operationId: 'purchaseChests',
  tag: 'Chests',
  summary: 'Buy chests',
  description:
    "Debits the calling player's balance and adds `quantity` (default 1, at most 10) chests of a catalog chest to their inventory, atomically: when the chests cannot be added, the debit is refunded. " +
    "With a paid currency of the app's compliance rules, the purchase is refused, before anything is debited, to players of a blocked region or under the minimum age, " +
    'and to players who have not declared the `country` (when regions are blocked) or `birth_year` (when there is a minimum age) it needs; `meta.reason` of the error says which. ' +
    "It is also refused when its amount would pass one of the player's spend limits (`compliance.spend_limits`, per UTC day and month, in units of paid currency; GET /api/v1/players/me/limits).",
  token: 'required',
  params: catalogChestId,
  headers: idempotencyKeyHeader('the first purchase (a purchase that failed or was refunded releases its key)'),
  bodyExample: { data: { type: 'purchase', attributes: { currency: 'coins', quantity: 1 } } },
  responses: [
    { status: 201, description: 'Bought: the new inventory chests.', schema: PurchaseDocument, headers: { ...NO_STORE_HEADER, ...REPLAYED_HEADER } },
  ],
  errors: {
    400: [INVALID_ID, INVALID_IDEMPOTENCY_KEY],
    403: [
      "a paid currency, and the player's country is blocked or not declared (`blocked_in_region`, `meta.reason` `country_blocked` or `country_unknown`)",
      'a paid currency, and the player is under the minimum age or has not declared a birth year (`age_restricted`, `meta.reason` `under_min_age` or `birth_year_unknown`, `meta.min_age`)',
      "a paid currency, and the amount would pass one of the player's spend limits (`spend_limit_reached`, `meta.limit` = `{period, limit, spent, resets_at}`; GET /api/v1/players/me/limits)",
      `${IN_DEBT_403}, and no chest is added`,
    ],
    404: [unknownCatalogChest],
    409: [
      'the inventory would exceed its capacity (`inventory_full`)',
      `the balance is too low (\`insufficient_funds\`: ${INSUFFICIENT_FUNDS})`,
      'the Idempotency-Key was used for another purchase (`idempotency_key_reused`)',
      'a purchase with the Idempotency-Key is still under way (`idempotency_key_in_use`)',
    ],
    422: ['the chest cannot be bought with that currency (`price_unavailable`)'],
    503: [
      "the app's content is not loaded yet (`content_unavailable`)",
      'the purchase was interrupted; anything taken is refunded (`purchase_interrupted`)',
    ],
  },
};

/** GET /api/v1/players/{id}/chests. */
export const getInventory: OperationDoc = {
  operationId: 'getInventory',
  tag: 'Inventory',
  summary: "A player's unopened chests",
  description:
    "A player's unopened chests with the inventory meta. Always readable for oneself (`me` or one's own id, with a token). " +
    "Another player's inventory follows their privacy: public → counts only (`data` empty); private → 403; friends → confirmed friends see the chests, others 403. " +
    "Guests never see another player's; a caller without a token sees none (401). Never cached.",
  token: 'required',
  params: { id: { schema: PlayerIdOrMe, description: 'A player id, or `me` for the calling player.', example: 'me' } },
  responses: [{ status: 200, description: 'The inventory.', schema: InventoryDocument, headers: NO_STORE_HEADER }],
  errors: {
    400: ['a path id that is neither a UUID nor `me` (`invalid_id`)'],
    403: [
      "another player's private profile (`profile_private`)",
      'a friends-only profile of someone not a confirmed friend (`friends_only`)',
      "a guest reading another player's (`guest_forbidden`)",
    ],
    404: ['no such player in this app (`player_not_found`)'],
  },
};

/** GET /api/v1/players/me/openings. */
export const listOpenings: OperationDoc = {
  operationId: 'listOpenings',
  tag: 'Inventory',
  summary: "The calling player's openings",
  description: 'Every chest the calling player opened, newest first, with its result. Never cached.',
  token: 'required',
  responses: [{ status: 200, description: 'A page of openings.', schema: ChestOpeningsDocument, headers: NO_STORE_HEADER }],
};
