import { createHash } from 'node:crypto';
import type { z } from 'zod';
import { OpeningConversions } from '../contracts/collections.js';
import { ComplianceProfileSchema, GetComplianceProfile } from '../contracts/compliance.js';
import { WebhookInterest, type WebhookEventType } from '../contracts/domain-events.js';
import { InventoryAccess } from '../contracts/players-access.js';
import type { ReplyOf } from '../contracts/subject.js';
import { DebitCurrency, RefundDebit } from '../contracts/wallet.js';
import { AppError } from '../errors/app-error.js';
import { endpoint, type Endpoint } from '../runtime/endpoint.js';

/** A player's declared country and birth year, as players answers chests. */
export type ComplianceProfile = z.infer<typeof ComplianceProfileSchema>;

/**
 * Contract-bound stand-ins for the neighbours a service asks while it works: each answers one
 * contract's subject through the service tier's responder, which validates the request and the
 * reply with the contract's zod schemas, so a stand-in cannot drift from the real service.
 */

/** Egress as the producers of webhook events ask it: the app's endpoints take `types` (default: none). */
export function webhookInterestStandIn(types: WebhookEventType[] = []): Endpoint<typeof WebhookInterest> {
  return endpoint(WebhookInterest, async () => ({ types }));
}

/** What a stand-in wallet holds and was asked: balances by player and currency, debits by reference. */
export interface StandInWallet {
  endpoints: [Endpoint<typeof DebitCurrency>, Endpoint<typeof RefundDebit>];
  /** Sets a player's balance of a currency (default 0). */
  credit(playerId: string, currency: string, amount: number): void;
  balance(playerId: string, currency: string): number;
  /** The debits it applied, by reference (a refunded one is flagged). */
  debits: Map<string, { playerId: string; currency: string; amount: number; refunded: boolean }>;
}

/**
 * The wallet as chests asks it (debits and their refunds), over balances held in memory: a debit
 * is applied once per reference, never below zero (409 insufficient_funds with `meta.required` and
 * `meta.balance`, as the wallet answers it); a refund credits back
 * exactly its debit, at most once.
 */
export function walletStandIn(): StandInWallet {
  const balances = new Map<string, number>();
  const debits: StandInWallet['debits'] = new Map();
  const key = (playerId: string, currency: string) => `${playerId}:${currency}`;
  const balance = (playerId: string, currency: string) => balances.get(key(playerId, currency)) ?? 0;
  const view = (playerId: string, currency: string) => ({
    currencyId: currencyIdOf(currency),
    currency,
    balance: balance(playerId, currency).toFixed(2),
  });
  const debit = endpoint(DebitCurrency, async (req) => {
    if (debits.has(req.reference)) return view(req.playerId, req.currency);
    const left = balance(req.playerId, req.currency) - Number(req.amount);
    if (left < 0) {
      const [required, held] = [Number(req.amount).toFixed(2), balance(req.playerId, req.currency).toFixed(2)];
      throw new AppError({
        kind: 'conflict',
        code: 'insufficient_funds',
        detail: `This needs ${required} ${req.currency}, and the balance is ${held} ${req.currency}.`,
        meta: { currency: req.currency, required, balance: held },
      });
    }
    balances.set(key(req.playerId, req.currency), left);
    debits.set(req.reference, { playerId: req.playerId, currency: req.currency, amount: Number(req.amount), refunded: false });
    return view(req.playerId, req.currency);
  });
  const refund = endpoint(RefundDebit, async (req) => {
    const d = debits.get(req.reference);
    if (!d) return { outcome: 'unknown_reference' as const };
    if (d.refunded) return { outcome: 'already_refunded' as const };
    d.refunded = true;
    balances.set(key(d.playerId, d.currency), balance(d.playerId, d.currency) + d.amount);
    return { outcome: 'refunded' as const, balance: balance(d.playerId, d.currency).toFixed(2) };
  });
  return {
    endpoints: [debit, refund],
    credit: (playerId, currency, amount) => balances.set(key(playerId, currency), amount),
    balance,
    debits,
  };
}

/** A stable made-up currency id per code (the stand-in wallet's currencies have no rows). */
function currencyIdOf(code: string): string {
  const hex = createHash('sha1').update(`stand-in-currency:${code}`).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-8${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/** Players as chests asks it for a caller's country and birth year: `profiles` by player id, else nothing declared. */
export function complianceProfileStandIn(profiles: Map<string, ComplianceProfile> = new Map()): Endpoint<typeof GetComplianceProfile> {
  return endpoint(GetComplianceProfile, async (_req, ctx) => profiles.get(ctx.playerId ?? '') ?? { country: null, birthYear: null });
}

/**
 * Players as chests asks it who may see an inventory: the owner sees it in full; another caller
 * gets `access` by owner id (default: 404 player_not_found, an unknown player).
 */
export function inventoryAccessStandIn(access: Map<string, ReplyOf<typeof InventoryAccess>> = new Map()): Endpoint<typeof InventoryAccess> {
  return endpoint(InventoryAccess, async (req, ctx) => {
    if (req.ownerId === ctx.playerId) return { access: 'full' };
    const decision = access.get(req.ownerId);
    if (!decision) throw AppError.notFound('player_not_found', 'The player does not exist.');
    return decision;
  });
}

/** Collections as chests asks it for openings' duplicate conversions: `converted` by opening id, the rest not applied yet. */
export function openingConversionsStandIn(converted: Map<string, ReplyOf<typeof OpeningConversions>['openings'][number]['converted']> = new Map()) {
  return endpoint(OpeningConversions, async (req) => ({
    openings: req.openingIds.filter((id) => converted.has(id)).map((openingId) => ({ openingId, converted: converted.get(openingId)! })),
  }));
}
