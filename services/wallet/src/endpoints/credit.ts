import { createHash } from 'node:crypto';
import { CreditCurrency, endpoint, withTransaction, type Pool, type Queryable, type RequestOf } from '@ccs/shared';
import { z } from 'zod';
import { appOf, callerOf } from '../call-context.js';
import { walletErrors } from '../errors.js';
import { playerCreditAllowed } from '../repositories/apps-repo.js';
import { addToBalance } from '../repositories/balances-repo.js';
import { findCreditTarget } from '../repositories/currencies-repo.js';
import { claimKey, storeAnswer } from '../repositories/idempotency-repo.js';

const StoredAnswer = z.object({ balance: z.string() });
type CreditRequest = RequestOf<typeof CreditCurrency>;

/** Same key and same body means the same currency and the very same amount string. */
const requestHash = (req: CreditRequest) =>
  createHash('sha256').update(JSON.stringify([req.currencyId, req.amount])).digest('hex');

/**
 * wallet.v1.credit: credits the calling player. With an Idempotency-Key the key is claimed first
 * (same transaction), so a repeat returns the stored answer and a concurrent repeat waits for it.
 * Failed requests store nothing: the client may correct them and retry with the same key.
 */
export function creditEndpoint(pool: Pool) {
  return endpoint(CreditCurrency, async (req, ctx) => {
    const appId = appOf(ctx);
    const playerId = callerOf(ctx);
    return withTransaction(pool, async (tx) => {
      const key = req.idempotencyKey;
      if (key) {
        const claim = await claimKey(tx, appId, playerId, key, requestHash(req));
        if (!claim.claimed) {
          if (claim.requestHash === undefined) throw walletErrors.idempotencyKeyBusy();
          if (claim.requestHash !== requestHash(req)) throw walletErrors.idempotencyKeyReused();
          const stored = StoredAnswer.safeParse(claim.response);
          if (!stored.success) throw walletErrors.idempotencyKeyBusy();
          return { balance: stored.data.balance, replayed: true };
        }
      }
      const currencyId = await checkCredit(tx, appId, req);
      const balance = await addToBalance(tx, {
        appId,
        playerId,
        currencyId,
        amount: req.amount,
        reason: 'credit',
        reference: key ?? null,
        requestId: ctx.requestId,
      });
      if (key) await storeAnswer(tx, appId, playerId, key, { balance });
      return { balance, replayed: false };
    });
  });
}

/** 403 when the app wants its secret key, 404 for a currency not in the app, 422 for the amount. */
async function checkCredit(tx: Queryable, appId: string, req: CreditRequest): Promise<string> {
  if (req.keyKind !== 'secret' && (await playerCreditAllowed(tx, appId)) === false) throw walletErrors.secretKeyRequired();
  const target = await findCreditTarget(tx, appId, req.currencyId, req.amount);
  if (!target) throw walletErrors.currencyNotFound({ parameter: 'currency_id' });
  if (!target.positive) throw walletErrors.amountNotPositive();
  if (!target.withinMax) throw walletErrors.amountAboveMaximum(target.maxCredit);
  return target.id;
}
