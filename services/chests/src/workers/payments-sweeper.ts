import { periodicWorker, type Worker } from '@ccs/shared';
import type { ChestsDeps } from '../deps.js';
import { paymentSweep } from '../config.js';
import { claimStalePayments } from '../repositories/payments-repo.js';
import { settleCompensation } from '../payments/runner.js';

/**
 * The one sweeper of every payment (purchases, keys, timer skips): settles the payments a crash
 * left half-done (`pending`, `debited` or `compensating` for longer than PAYMENT_STALE_MS). Each is
 * claimed (`compensating`, `FOR UPDATE SKIP LOCKED`, so replicas share them) and driven back
 * through the runner's compensation of the `debit-wallet` step: refunded in the wallet, or its
 * reference voided when the debit never happened (`refunded` or `failed`). A saga still under way
 * finds its payment claimed and stops (503 purchase_interrupted / opening_interrupted /
 * unlock_interrupted), so an amount is never both refunded and used. A refund that fails is
 * retried on a later pass.
 */
export function paymentsSweeper(deps: Pick<ChestsDeps, 'pool' | 'bus' | 'log' | 'config'>): Worker & { sweep(): Promise<number> } {
  const { everyMs, staleMs } = paymentSweep(deps.config);
  const sweep = async (): Promise<number> => {
    let settled = 0;
    for (const p of await claimStalePayments(deps.pool, staleMs, 50)) {
      try {
        const ctx = { requestId: `sweep-${p.id}`, appId: p.appId, playerId: p.playerId };
        const outcome = await settleCompensation(deps, p, ctx, 'interrupted');
        settled += 1;
        deps.log.info({ payment: p.id, kind: p.kind, outcome }, 'interrupted payment settled');
      } catch (err) {
        deps.log.warn({ err: String(err), payment: p.id, kind: p.kind }, 'refund of an interrupted payment failed; will retry');
      }
    }
    return settled;
  };
  return { ...periodicWorker({ log: deps.log, everyMs, what: 'interrupted payments (purchases, keys, timer skips) settled', pass: sweep }), sweep };
}
