import { z } from 'zod';
import { UuidSchema } from '@ccs/shared';
import type { ParamDoc } from '../route-doc.js';

/** Pieces several operations share. */

/** A path id the route checks as a UUID (400 `invalid_id` otherwise). */
export const uuidParam = (description: string): ParamDoc => ({ schema: UuidSchema, description, example: '3f2b6c1e-8a4d-4f7b-9c2e-5d1a0b7e6f43' });

/** The 400 line of a route whose path id must be a UUID. */
export const INVALID_ID = 'a path id that is not a UUID (`invalid_id`, `source.parameter` names it)';

/** The optional Idempotency-Key request header (open, credit). */
export const idempotencyKeyHeader = (what: string): Record<string, ParamDoc> => ({
  'Idempotency-Key': {
    schema: z.string().regex(/^[\x21-\x7e]{1,255}$/),
    description: `Makes a retry safe: the same key (per app and player) gives ${what} again, with \`idempotent-replayed: true\`. 1 to 255 printable ASCII characters.`,
    example: 'order-1234',
  },
});

/** The 400 line of a malformed Idempotency-Key. */
export const INVALID_IDEMPOTENCY_KEY = 'an `Idempotency-Key` that is not 1 to 255 printable ASCII characters (`invalid_idempotency_key`)';

/** The response header of an idempotent replay. */
export const REPLAYED_HEADER = {
  'idempotent-replayed': {
    description: '`true` when this is the stored answer to an earlier request with the same Idempotency-Key.',
    schema: z.literal('true'),
  },
};

/** Answers that must not be stored by caches. */
export const NO_STORE_HEADER = {
  'cache-control': { description: '`no-store`: the answer changes with every call.', schema: z.string() },
};

/** Answers that carry the caller's own data when a token is sent. */
export const PRIVATE_WITH_TOKEN_HEADER = {
  'cache-control': {
    description: "`private, no-store` on authenticated requests (the answer carries the caller's progress); absent otherwise.",
    schema: z.string(),
  },
};

/** Path parameter of a player's inventory: a UUID or `me`. */
export const PlayerIdOrMe = z.union([z.literal('me'), UuidSchema]);

/** How the spec's unprefixed aliases are described. */
export const ALIAS_NOTE = "The spec's unprefixed path: the same operation as under `/api/v1` (it still needs the `apikey`).";

/** The wallet's refusal of a spend the balance does not cover, as every spending operation documents it. */
export const INSUFFICIENT_FUNDS =
  '`meta.currency`, `meta.required` (what it costs, e.g. `"1000.00"`) and `meta.balance` (what the player holds, e.g. `"500.00"`)';

/**
 * A spend refused because the player owes the currency (wallet.v1.debit's 403): a store refund took
 * back currency that was already spent, and nothing is debited until credits bring the balance back to zero.
 */
export const IN_DEBT_403 =
  'the balance of the currency is below zero (`currency_in_debt`, `meta.currency`, `meta.debt`: the amount owed): a store refund took back currency that was already spent, and nothing of it can be spent until credits bring the balance back to zero; nothing is debited';
