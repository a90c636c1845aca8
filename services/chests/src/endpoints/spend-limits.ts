import { appOf, applicableSpendLimits, callerOf, complianceInForce, endpoint, GetComplianceProfile, GetSpendLimits } from '@ccs/shared';
import type { ChestsDeps } from '../deps.js';
import { currentComplianceRules } from '../compliance/gate.js';
import { spendTotals, standings } from '../repositories/spend-repo.js';

/**
 * chests.v1.spend_limits: the spend limits of the current content that hold the calling player
 * (DESIGN.md §7), the strictest per period, each with what was spent in the current UTC day or
 * month, what remains and when it resets. No limits in the content (nor its rule packs): none, and
 * players is not asked.
 */
export function spendLimitsEndpoint(deps: ChestsDeps) {
  return endpoint(GetSpendLimits, async (_req, ctx) => {
    const appId = appOf(ctx);
    const playerId = callerOf(ctx);
    const rules = await currentComplianceRules(deps, appId);
    if (!rules?.paid_currencies.length || !complianceInForce(rules).spend_limits.length) return { limits: [] };
    const limits = applicableSpendLimits(rules, await deps.bus.request(GetComplianceProfile, {}, ctx));
    if (!limits.length) return { limits: [] };
    return { limits: standings(limits, await spendTotals(deps.pool, appId, playerId, rules.paid_currencies)) };
  });
}
