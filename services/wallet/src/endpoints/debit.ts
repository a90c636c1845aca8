import { appOf, DebitCurrency, endpoint, withTransaction, type Pool } from '@ccs/shared';
import { walletErrors } from '../errors.js';
import { debitShortfall, takeFromBalance } from '../repositories/balances-repo.js';
import { currencyIdsByCode } from '../repositories/currencies-repo.js';
import { claimDebit, findDebit, isVoided, lockReference, setDebitBalance } from '../repositories/debits-repo.js';

/**
 * wallet.v1.debit (purchases): takes an amount from a player's balance, never below zero.
 * The reference is claimed first, so a retried or concurrent debit with it answers like the first
 * one and moves no money twice; reusing a reference for a different debit is a 409. A balance
 * that does not cover the amount is refused with nothing changed (the claim rolls back): 403
 * currency_in_debt while it is below zero (a store refund's debt blocks every spend of the
 * currency), 409 insufficient_funds otherwise, with what the debit needed and the balance
 * (`meta.required`, `meta.balance`) so a client can say how much is missing. The balance is read
 * only on that path, so a debit that succeeds costs no extra statement.
 */
export function debitEndpoint(pool: Pool) {
  return endpoint(DebitCurrency, async (req, ctx) => {
    const appId = appOf(ctx);
    // The amount is a validated decimal string: it is zero exactly when it has no non-zero digit.
    if (!/[1-9]/.test(req.amount)) throw walletErrors.amountNotPositive();
    return withTransaction(pool, async (tx) => {
      await lockReference(tx, appId, req.reference);
      if (await isVoided(tx, appId, req.reference)) throw walletErrors.referenceVoided();
      const currencyId = (await currencyIdsByCode(tx, appId, [req.currency])).get(req.currency);
      if (!currencyId) throw walletErrors.currencyNotFound();
      const debit = { appId, reference: req.reference, playerId: req.playerId, currencyId, amount: req.amount };
      if (!(await claimDebit(tx, debit))) {
        const first = await findDebit(tx, appId, req.reference, req.amount);
        const same = first?.sameAmount && first.playerId === req.playerId && first.currencyId === currencyId;
        if (!same || first.balanceAfter === null) throw walletErrors.referenceReused();
        return { currencyId, currency: req.currency, balance: first.balanceAfter };
      }
      const balance = await takeFromBalance(tx, { ...debit, reason: 'debit', requestId: ctx.requestId });
      if (balance === undefined) {
        const { balance: now, required } = await debitShortfall(tx, debit);
        throw now.startsWith('-')
          ? walletErrors.currencyInDebt(req.currency, now.slice(1))
          : walletErrors.insufficientFunds(req.currency, required, now);
      }
      await setDebitBalance(tx, appId, req.reference, balance);
      return { currencyId, currency: req.currency, balance };
    });
  });
}
