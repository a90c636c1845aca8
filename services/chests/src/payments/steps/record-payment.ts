import { withTransaction, type ApplicableSpendLimit, type Pool, type SagaStep } from '@ccs/shared';
import { chestErrors } from '../../errors.js';
import { insertPayment, type NewPayment } from '../../repositories/payments-repo.js';
import { exceeded, lockPlayerSpend, spendTotals } from '../../repositories/spend-repo.js';

/**
 * The spend limits a payment is held to (docs/design.md §7): the player's applicable limits and the
 * paid currencies whose spend they count. Given by the compliance gate (compliance/gate.ts) when
 * the payment's currency is paid and some limit applies to the player.
 */
export interface SpendCheck {
  limits: ApplicableSpendLimit[];
  currencies: string[];
}

/** What the record step writes: the payment under its id, and the spend limits it is held to. */
export interface PaymentRecord {
  id: string;
  payment: NewPayment;
  spend?: SpendCheck;
}

/**
 * The runner's first write, before the debit: records the payment `pending` (its id the debit's
 * reference) and, under spend limits, reserves its amount in the same transaction: under the
 * player's spend lock the day's and month's spend is summed and the payment recorded only if its
 * amount fits every limit, else 403 `spend_limit_reached` and nothing is recorded. So two payments
 * racing at a limit cannot both pass. The recorded payment IS the reservation, released by the
 * payment's own settlement: a refused debit (`failed`), a compensation (`refunded`), or the
 * payments sweeper settling a saga that crashed; nothing of its own to compensate. A replay of a
 * purchase under its Idempotency-Key answers before this step, and a second record of the key
 * fails on its unique index: nothing counts twice.
 */
export function recordPayment(pool: Pool): SagaStep<PaymentRecord, void, never, void> {
  return {
    id: 'record-payment',
    async invoke({ id, payment, spend }) {
      if (!spend?.limits.length) return insertPayment(pool, id, payment);
      await withTransaction(pool, async (tx) => {
        await lockPlayerSpend(tx, payment.appId, payment.playerId);
        await checkSpendFits(tx, payment, spend, Number(payment.amount));
        await insertPayment(tx, id, payment);
      });
    },
    compensate: async () => undefined,
  };
}

/**
 * Refuses (403 `spend_limit_reached`, `meta.limit`) when `amount` more of the player's spend would
 * pass one of their limits. Alone (without the lock) it reserves nothing: a batch asks it for its
 * whole cost before its first debit, so a batch that cannot fit debits nothing.
 */
export async function checkSpendFits(
  db: Parameters<typeof spendTotals>[0],
  who: { appId: string; playerId: string },
  spend: SpendCheck,
  amount: number,
): Promise<void> {
  const over = exceeded(spend.limits, await spendTotals(db, who.appId, who.playerId, spend.currencies), amount);
  if (over) throw chestErrors.spendLimitReached(over);
}
