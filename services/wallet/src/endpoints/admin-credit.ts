import {
  AdminCreditPlayer,
  endpoint,
  withTransaction,
  type OutboxMessage,
  type OutboxRelay,
  type Pool,
  type WebhookInterestCache,
} from '@ccs/shared';
import { walletErrors } from '../errors.js';
import { addToBalance } from '../repositories/balances-repo.js';
import { checkAmountAgainstCurrency } from '../repositories/currencies-repo.js';
import { claimGrantReference, setGrantBalance, storedGrant, type StoredGrant } from '../repositories/studio-grants-repo.js';

/** Where the studio grant's attributes are in the admin API's body (errors point there). */
const AMOUNT = '/data/attributes/amount';

/**
 * wallet.v1.admin_credit: the studio's grant of any currency (paid ones included) to a player of
 * its app, once per reference. In one transaction: a reference already granted answers its first
 * result (same player, currency and amount) or 409 reference_reused; otherwise the currency and
 * amount are checked, the reference is claimed (the primary key: a concurrent grant of it waits
 * here, then finds this one), the balance is credited with a `studio_grant` ledger row and its
 * currency.credited event, and the balance after it is kept with the claim.
 */
export function adminCreditEndpoint(pool: Pool, relay: OutboxRelay, interest?: WebhookInterestCache) {
  return endpoint(AdminCreditPlayer, async (req, ctx) => {
    const appId = req.appId.toLowerCase();
    const playerId = req.playerId.toLowerCase();
    const emitEvent = interest ? await interest.wants(appId, 'currency.credited', ctx.requestId) : true;
    const replay = (g: StoredGrant) => {
      if (g.playerId !== playerId || g.currency !== req.currency || !g.same || g.balance === null) throw walletErrors.grantReferenceReused();
      return { currency: g.currency, balance: g.balance, replayed: true };
    };
    const events: OutboxMessage[] = [];
    const answer = await withTransaction(pool, async (tx) => {
      const earlier = await storedGrant(tx, appId, req.reference, req.amount);
      if (earlier) return replay(earlier);
      const currency = await checkAmountAgainstCurrency(tx, appId, req.currency, req.amount);
      if (!currency) throw walletErrors.grantCurrencyUnknown();
      if (!currency.positive) throw walletErrors.amountNotPositive(AMOUNT);
      if (!currency.withinMax) throw walletErrors.amountAboveMaximum(currency.maxCredit, AMOUNT);
      if (!currency.inUnits) throw walletErrors.amountNotWhole(AMOUNT);
      const claimed = await claimGrantReference(tx, appId, {
        reference: req.reference,
        playerId,
        currencyId: currency.id,
        amount: req.amount,
        requestId: ctx.requestId,
      });
      if (!claimed) {
        // A concurrent grant of this reference committed while this one waited on the key.
        const first = await storedGrant(tx, appId, req.reference, req.amount);
        if (!first) throw walletErrors.grantReferenceReused();
        return replay(first);
      }
      const credited = await addToBalance(tx, {
        appId,
        playerId,
        currencyId: currency.id,
        amount: req.amount,
        reason: 'studio_grant',
        reference: req.reference,
        requestId: ctx.requestId,
        emitEvent,
      });
      await setGrantBalance(tx, appId, req.reference, credited.balance);
      events.push(...credited.events);
      return { currency: req.currency, balance: credited.balance, replayed: false };
    });
    // The grant's currency.credited event goes out once committed (the relay publishes it otherwise).
    void relay.publishNow(events).catch(() => undefined);
    return answer;
  });
}
