import { createHash } from 'node:crypto';
import {
  appOf,
  callerOf,
  CreditCurrency,
  endpoint,
  isUniqueViolation,
  withTransaction,
  type OutboxMessage,
  type OutboxRelay,
  type Pool,
  type Queryable,
  type RequestOf,
  type WebhookInterestCache,
} from '@ccs/shared';
import { z } from 'zod';
import { walletErrors } from '../errors.js';
import { balanceOf, creditChecked } from '../repositories/balances-repo.js';
import { claimKey, storeAnswer } from '../repositories/idempotency-repo.js';

const StoredAnswer = z.object({ balance: z.string() });
type CreditRequest = RequestOf<typeof CreditCurrency>;

/** Same key and same body means the same currency and the very same amount string. */
const requestHash = (req: CreditRequest) =>
  createHash('sha256')
    .update(JSON.stringify([req.currencyId, req.amount]))
    .digest('hex');

/**
 * wallet.v1.credit: credits the calling player. Without an Idempotency-Key it is one statement
 * (checks and change together, see creditChecked), under the gateway's retry key when it sent one:
 * a repeat of that request applies nothing and answers the balance. With one, the key is claimed first in the same
 * transaction, so a repeat returns the stored answer and a concurrent repeat waits for it.
 * Failed requests store nothing: the client may correct them and retry with the same key.
 */
export function creditEndpoint(pool: Pool, relay: OutboxRelay, interest?: WebhookInterestCache) {
  // The credit's currency.credited event goes out once its statement (or transaction) committed.
  const publish = (events: OutboxMessage[]) => void relay.publishNow(events).catch(() => undefined);
  return endpoint(CreditCurrency, async (req, ctx) => {
    const appId = appOf(ctx);
    const playerId = callerOf(ctx);
    const key = req.idempotencyKey;
    // In memory after the app's first credit: whether its webhooks take currency.credited.
    const emitEvent = interest ? await interest.wants(appId, 'currency.credited', ctx.requestId) : true;
    if (!key) {
      try {
        const { balance, events } = await credit(pool, appId, playerId, req, ctx.requestId, emitEvent);
        publish(events);
        return { balance, replayed: false };
      } catch (err) {
        // The gateway's retry key was applied by an earlier try of this very request: answer the balance.
        if (!req.retryKey || !isUniqueViolation(err, 'ledger_retry_once')) throw err;
        return { balance: await balanceOf(pool, appId, playerId, req.currencyId), replayed: true };
      }
    }
    const events: OutboxMessage[] = [];
    const answer = await withTransaction(pool, async (tx) => {
      const claim = await claimKey(tx, appId, playerId, key, requestHash(req));
      if (!claim.claimed) {
        if (claim.requestHash === undefined) throw walletErrors.idempotencyKeyBusy();
        if (claim.requestHash !== requestHash(req)) throw walletErrors.idempotencyKeyReused();
        const stored = StoredAnswer.safeParse(claim.response);
        if (!stored.success) throw walletErrors.idempotencyKeyBusy();
        return { balance: stored.data.balance, replayed: true };
      }
      const made = await credit(tx, appId, playerId, req, ctx.requestId, emitEvent);
      await storeAnswer(tx, appId, playerId, key, { balance: made.balance });
      events.push(...made.events);
      return { balance: made.balance, replayed: false };
    });
    publish(events);
    return answer;
  });
}

/**
 * Makes the credit, or refuses it with nothing changed: 403 player_credit_disabled when the app's
 * content does not let players credit (a publishable key), 404 for a currency not in the app,
 * 403 paid_currency for a paid currency (whatever the key: the studio grants those through the
 * admin API), 422 for the amount (positive, at most max_credit, whole for a `whole` currency). Returns the new balance.
 */
async function credit(
  q: Queryable,
  appId: string,
  playerId: string,
  req: CreditRequest,
  requestId: string,
  emitEvent: boolean,
): Promise<{ balance: string; events: OutboxMessage[] }> {
  const r = await creditChecked(q, {
    appId,
    playerId,
    currencyId: req.currencyId,
    amount: req.amount,
    reference: req.idempotencyKey ?? null,
    // Only on the plain path: a client's key is claimed in idempotency_keys instead.
    ...(req.idempotencyKey ? {} : { retryKey: req.retryKey }),
    requestId,
    emitEvent,
    secretKey: req.keyKind === 'secret',
  });
  if (req.keyKind !== 'secret' && r.allowed === false) throw walletErrors.playerCreditDisabled();
  if (!r.currencyId) throw walletErrors.currencyNotFound({ parameter: 'currency_id' });
  if (r.paid) throw walletErrors.paidCurrency();
  if (!r.positive) throw walletErrors.amountNotPositive();
  if (!r.withinMax) throw walletErrors.amountAboveMaximum(r.maxCredit ?? '0');
  if (!r.inUnits) throw walletErrors.amountNotWhole();
  if (r.balance === null) throw new Error(`credit of ${req.currencyId} passed its checks but changed nothing`);
  return { balance: r.balance, events: r.events };
}
