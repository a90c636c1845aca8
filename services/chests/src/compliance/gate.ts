import {
  applicableSpendLimits,
  GetComplianceProfile,
  isGatedCurrency,
  purchaseRefusal,
  type CallContext,
  type ComplianceRules,
  type PlayerComplianceProfile,
} from '@ccs/shared';
import type { ChestsDeps } from '../deps.js';
import { catalogVersion } from '../cache/content-version.js';
import { chestErrors, type PaidUse } from '../errors.js';
import type { SpendCheck } from '../payments/steps/record-payment.js';

/** What the gate reads: the app's current content (its compliance rules) and, when needed, the player's profile. */
export type GateDeps = Pick<ChestsDeps, 'bus' | 'cache' | 'pool' | 'drops'>;

/**
 * THE compliance gate of every way a player spends a paid currency on random content
 * (docs/content.md, "Compliance"): buying a chest, opening a chest whose key is a paid currency,
 * skipping a timer with a paid currency, and a batch open that includes any of these. Every path
 * calls it before anything is recorded or debited. A currency of `compliance.paid_currencies`
 * (when some gate is set) is refused from a blocked region (403 `blocked_in_region`) or below the
 * minimum age (403 `age_restricted`), unknown country or birth year included. Players owns the
 * country and birth year: they are asked for (one read-only call) only when the currency is
 * gated, so a free currency never depends on the players service.
 *
 * Passed, it answers the spend limits (docs/design.md §7) the player is held to, if any: the caller
 * gives them to the payment runner, whose record of the payment reserves the amount under them
 * (403 `spend_limit_reached` past one). An unknown birth year or country is held to every limit
 * that could apply (`applicableSpendLimits`).
 */
export async function checkPaidUse(
  deps: Pick<ChestsDeps, 'bus'>,
  rules: ComplianceRules | undefined,
  currency: string,
  use: PaidUse,
  ctx: CallContext,
): Promise<SpendCheck | undefined> {
  if (!rules || !isGatedCurrency(rules, currency)) return undefined;
  const profile = await deps.bus.request(GetComplianceProfile, {}, ctx);
  const refusal = purchaseRefusal(rules, currency, profile);
  if (refusal) throw chestErrors.complianceRefused(refusal, use);
  const limits = applicableSpendLimits(rules, profile);
  return limits.length ? { limits, currencies: rules.paid_currencies } : undefined;
}

/**
 * The compliance rules of the app's current content (undefined before any content arrived, or
 * when it sets none): the rules in force now, whatever content version a chest was acquired under.
 */
export async function currentComplianceRules(deps: GateDeps, appId: string): Promise<ComplianceRules | undefined> {
  const version = await catalogVersion(deps, appId);
  const content = version === undefined ? undefined : await deps.drops.content(appId, version);
  return content?.compliance;
}

/** The gate for a key or skip currency, with the current rules; the spend limits the debit is held to, if any. */
export async function checkPaidUseNow(
  deps: GateDeps,
  appId: string,
  currency: string,
  use: PaidUse,
  ctx: CallContext,
): Promise<SpendCheck | undefined> {
  return checkPaidUse(deps, await currentComplianceRules(deps, appId), currency, use, ctx);
}

/**
 * The gated currencies the calling player may not spend, and why: the same decision as the
 * gate, from one profile read, none when no currency is gated. The catalog shows it as
 * `meta.purchasable`, `meta.requires_key.allowed` and `meta.unlock.skip_allowed`.
 */
export async function refusedCurrencies(
  deps: Pick<ChestsDeps, 'bus'>,
  rules: ComplianceRules | undefined,
  ctx: CallContext,
): Promise<Record<string, 'blocked_in_region' | 'age_restricted'>> {
  const gated = (rules?.paid_currencies ?? []).filter((c) => isGatedCurrency(rules, c));
  if (!gated.length) return {};
  const profile: PlayerComplianceProfile = await deps.bus.request(GetComplianceProfile, {}, ctx);
  const refused: Record<string, 'blocked_in_region' | 'age_restricted'> = {};
  for (const currency of gated) {
    const refusal = purchaseRefusal(rules, currency, profile);
    if (refusal) refused[currency] = refusal.code;
  }
  return refused;
}
