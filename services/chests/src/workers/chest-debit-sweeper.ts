import { periodicWorker, type Worker } from '@ccs/shared';
import type { ChestsDeps } from '../deps.js';
import { claimStaleChestDebits, debitReference, moveChestDebit } from '../repositories/chest-debits-repo.js';
import { compensateStep } from '../saga/runner.js';
import { debitWallet } from '../saga/steps/debit-wallet.js';

/**
 * Settles chest debits (keys, timer skips) a crash left half-done (`pending` or `refunding` longer
 * than PURCHASE_STALE_MS): each is claimed (`refunding`), refunded in the wallet (or its reference
 * voided when the debit never happened), and ends `refunded`. An opening or unlock still under way
 * finds its debit claimed and stops (503 opening_interrupted / unlock_interrupted), so an amount is
 * never both refunded and used.
 */
export function chestDebitSweeper(deps: Pick<ChestsDeps, 'pool' | 'bus' | 'log' | 'config'>): Worker {
  return periodicWorker({
    log: deps.log,
    everyMs: deps.config.PURCHASE_SWEEP_INTERVAL_MS,
    what: 'interrupted chest debits (keys, timer skips) refunded',
    pass: async () => {
      let settled = 0;
      for (const d of await claimStaleChestDebits(deps.pool, deps.config.PURCHASE_STALE_MS, 50)) {
        try {
          const ctx = { requestId: `debit-sweep-${d.id}`, appId: d.appId, playerId: d.playerId };
          await compensateStep(debitWallet(deps.bus), { reference: debitReference(d.purpose, d.id) }, ctx);
          await moveChestDebit(deps.pool, d.id, ['refunding'], 'refunded');
          settled += 1;
        } catch (err) {
          deps.log.warn({ err: String(err), chestDebit: d.id, purpose: d.purpose }, 'refund of an interrupted chest debit failed; will retry');
        }
      }
      return settled;
    },
  });
}
