import {
  AdminCreditPlayer,
  endpoint,
  withTransaction,
  type OutboxMessage,
  type OutboxRelay,
  type Pool,
  type Queryable,
  type WebhookInterestCache,
} from '@ccs/shared';
import { walletErrors } from '../errors.js';
import { addToBalance } from '../repositories/balances-repo.js';

/** Where the studio grant's attributes are in the admin API's body (errors point there). */
const AMOUNT = '/data/attributes/amount';

/** A grant already made under a reference: whom, what, and the balance it answered. */
interface StoredGrant {
  playerId: string;
  currency: string;
  /** The stored amount equals this request's (compared as numbers: "10" and "10.00" are one amount). */
  same: boolean;
  balance: string | null;
}

/** The grant under (app, reference), if any, compared with this request. */
async function storedGrant(q: Queryable, appId: string, reference: string, amount: string): Promise<StoredGrant | undefined> {
  const r = await q.query<StoredGrant>(
    `SELECT g.player_id AS "playerId", c.code AS currency, g.amount = $3::numeric AS same, g.balance_after::text AS balance
       FROM studio_grants g JOIN currencies c ON c.id = g.currency_id
      WHERE g.app_id = $1 AND g.reference = $2`,
    [appId, reference, amount],
  );
  return r.rows[0];
}

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
      const c = await tx.query<{ id: string; maxCredit: string; positive: boolean; withinMax: boolean }>(
        `SELECT id, max_credit::text AS "maxCredit", $3::numeric > 0 AS positive, $3::numeric <= max_credit AS "withinMax"
           FROM currencies WHERE app_id = $1 AND code = $2 AND retired_at IS NULL`,
        [appId, req.currency, req.amount],
      );
      const currency = c.rows[0];
      if (!currency) throw walletErrors.grantCurrencyUnknown();
      if (!currency.positive) throw walletErrors.amountNotPositive(AMOUNT);
      if (!currency.withinMax) throw walletErrors.amountAboveMaximum(currency.maxCredit, AMOUNT);
      const claim = await tx.query(
        `INSERT INTO studio_grants (app_id, reference, player_id, currency_id, amount, request_id)
         VALUES ($1, $2, $3, $4, $5::numeric, $6) ON CONFLICT (app_id, reference) DO NOTHING`,
        [appId, req.reference, playerId, currency.id, req.amount, ctx.requestId],
      );
      if (claim.rowCount === 0) {
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
      await tx.query('UPDATE studio_grants SET balance_after = $3::numeric WHERE app_id = $1 AND reference = $2', [
        appId,
        req.reference,
        credited.balance,
      ]);
      events.push(...credited.events);
      return { currency: req.currency, balance: credited.balance, replayed: false };
    });
    // The grant's currency.credited event goes out once committed (the relay publishes it otherwise).
    void relay.publishNow(events).catch(() => undefined);
    return answer;
  });
}
