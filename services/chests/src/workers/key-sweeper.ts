import { periodicWorker, RefundDebit, type Worker } from '@ccs/shared';
import type { ChestsDeps } from '../deps.js';
import { claimStaleKeyDebits, keyReference, moveKeyDebit } from '../repositories/keys-repo.js';

/**
 * Settles key debits a crash left half-done (`pending` or `refunding` longer than
 * PURCHASE_STALE_MS): each is claimed (`refunding`), refunded in the wallet (or its reference
 * voided when the debit never happened), and ends `refunded`. An opening still under way finds its
 * debit claimed and stops (503 opening_interrupted), so a key is never both refunded and used.
 */
export function keySweeper(deps: Pick<ChestsDeps, 'pool' | 'bus' | 'log' | 'config'>): Worker {
  return periodicWorker({
    log: deps.log,
    everyMs: deps.config.PURCHASE_SWEEP_INTERVAL_MS,
    what: 'interrupted key debits refunded',
    pass: async () => {
      let settled = 0;
      for (const d of await claimStaleKeyDebits(deps.pool, deps.config.PURCHASE_STALE_MS, 50)) {
        try {
          await deps.bus.request(RefundDebit, { reference: keyReference(d.id) }, { requestId: `key-sweep-${d.id}`, appId: d.appId, playerId: d.playerId });
          await moveKeyDebit(deps.pool, d.id, ['refunding'], 'refunded');
          settled += 1;
        } catch (err) {
          deps.log.warn({ err: String(err), keyDebit: d.id }, 'refund of an interrupted key debit failed; will retry');
        }
      }
      return settled;
    },
  });
}
