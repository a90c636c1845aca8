import {
  GetComplianceProfile,
  isGatedCurrency,
  purchaseRefusal,
  type CallContext,
  type ComplianceRules,
  type PlayerComplianceProfile,
} from '@ccs/shared';
import type { ChestsDeps } from '../deps.js';
import { chestErrors } from '../errors.js';

/**
 * The compliance gates of a purchase (docs/content.md, "Compliance"), checked before anything is
 * debited: buying with a paid currency of the content version is refused from a blocked region
 * (403 blocked_in_region) or below the minimum age (403 age_restricted). Players owns the country
 * and birth year; they are asked for (one read-only call) only when the currency is gated, so
 * buying with anything else never depends on the players service.
 */
export async function checkPurchaseGates(
  deps: Pick<ChestsDeps, 'bus'>,
  rules: ComplianceRules | undefined,
  currency: string,
  ctx: CallContext,
): Promise<void> {
  if (!isGatedCurrency(rules, currency)) return;
  const profile = await deps.bus.request(GetComplianceProfile, {}, ctx);
  const refusal = purchaseRefusal(rules, currency, profile);
  if (refusal) throw chestErrors.complianceRefused(refusal, rules?.min_age);
}

/**
 * The gated currencies the calling player may not buy with, and why (the catalog's
 * `meta.purchasable`): the same decision as the purchase, from one profile read, none when no
 * currency is gated.
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
