import {
  appOf,
  applicableMoneyLimits,
  applicableSpendLimits,
  callerOf,
  complianceInForce,
  endpoint,
  GetComplianceProfile,
  GetSpendLimits,
  GetStoreMoneySpent,
  moneyStandings,
} from '@ccs/shared';
import type { ChestsDeps } from '../deps.js';
import { currentComplianceRules } from '../compliance/gate.js';
import { spendTotals, standings } from '../repositories/spend-repo.js';

/**
 * chests.v1.spend_limits: the spend limits of the current content that hold the calling player
 * (docs/design.md §7), the strictest per period, each with what was spent in the current UTC day or
 * month, what remains and when it resets. First those in units of paid currency (this service's
 * payments), then those in money (store spend, which the store answers: store.v1.money_spent,
 * converted by `compliance.money_rates`). No limits in the content (nor its rule packs): none,
 * and neither players nor the store is asked; the store only when a limit in money holds the player.
 */
export function spendLimitsEndpoint(deps: ChestsDeps) {
  return endpoint(GetSpendLimits, async (_req, ctx) => {
    const appId = appOf(ctx);
    const playerId = callerOf(ctx);
    const rules = await currentComplianceRules(deps, appId);
    const inForce = rules ? complianceInForce(rules).spend_limits : [];
    const anyUnits = rules?.paid_currencies.length && inForce.some((l) => l.money === undefined);
    if (!rules || (!anyUnits && !inForce.some((l) => l.money !== undefined))) return { limits: [] };
    const profile = await deps.bus.request(GetComplianceProfile, {}, ctx);
    const units = anyUnits ? applicableSpendLimits(rules, profile) : [];
    const money = applicableMoneyLimits(rules, profile);
    return {
      limits: [
        ...(units.length ? standings(units, await spendTotals(deps.pool, appId, playerId, rules.paid_currencies)) : []),
        ...(money.length ? moneyStandings(money, await deps.bus.request(GetStoreMoneySpent, {}, ctx), rules.money_rates) : []),
      ],
    };
  });
}
