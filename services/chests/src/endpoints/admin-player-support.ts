import { AdminPlayerPayments, AdminProfileAssumptions, endpoint, profileAssumptions } from '@ccs/shared';
import type { ChestsDeps } from '../deps.js';
import { currentComplianceRules } from '../compliance/gate.js';
import { listPlayerPayments } from '../repositories/payments-repo.js';

// What the studio's support reads of a player here (docs/console.md, "Players"), through the admin API.

/** chests.v1.admin_player_payments: the player's purchases, keys and timer skips, the newest first. */
export function adminPlayerPaymentsEndpoint(deps: ChestsDeps) {
  return endpoint(AdminPlayerPayments, async (req) => {
    const r = await listPlayerPayments(deps.pool, req.appId, req.playerId, req.limit);
    return { total: r.total, payments: r.payments.map((p) => ({ ...p, createdAt: p.createdAt.toISOString() })) };
  });
}

/**
 * chests.v1.admin_profile_assumptions: what the compliance rules of the app's current content
 * (with its rule packs) assume of a player because their country or birth year is not declared,
 * judged as the gates judge a purchase (profileAssumptions).
 */
export function adminProfileAssumptionsEndpoint(deps: ChestsDeps) {
  return endpoint(AdminProfileAssumptions, async (req) => {
    const rules = await currentComplianceRules(deps, req.appId);
    return { assumptions: profileAssumptions(rules, { country: req.country, birthYear: req.birthYear }) };
  });
}
