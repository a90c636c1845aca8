import { recordSagaOutcome, type Worker } from '@ccs/shared';
import type { ChestsDeps } from '../deps.js';
import { compensateStep } from '../saga/runner.js';
import { debitWallet } from '../saga/steps/debit-wallet.js';
import { claimStalePurchases, transition } from '../repositories/purchases-repo.js';

/**
 * Settles purchases a crash left half-done (`pending` or `debited` for longer than
 * PURCHASE_STALE_MS): each is claimed (`compensating`), its debit refunded, and it ends `refunded`
 * (or `failed` when nothing had been debited). A refund that fails is retried on a later pass.
 */
export class PurchaseSweeper implements Worker {
  private timer: NodeJS.Timeout | undefined;
  private pass: Promise<void> | undefined;

  constructor(private readonly deps: Pick<ChestsDeps, 'pool' | 'bus' | 'log' | 'config'>) {}

  start(): void {
    this.timer = setInterval(() => {
      this.pass ??= this.sweep()
        .then(() => undefined)
        .catch((err) => this.deps.log.warn({ err: String(err) }, 'purchase sweep failed; will retry'))
        .finally(() => (this.pass = undefined));
    }, this.deps.config.PURCHASE_SWEEP_INTERVAL_MS);
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.pass;
  }

  /** One pass: refunds every stale purchase (also callable directly, e.g. by tests). */
  async sweep(): Promise<number> {
    const stale = await claimStalePurchases(this.deps.pool, this.deps.config.PURCHASE_STALE_MS, 50);
    let settled = 0;
    for (const p of stale) {
      try {
        const ctx = { requestId: `sweep-${p.id}`, appId: p.appId, playerId: p.playerId };
        const outcome = await compensateStep(debitWallet(this.deps.bus), { reference: p.id }, ctx);
        await transition(this.deps.pool, p.id, ['compensating'], outcome === 'refunded' ? 'refunded' : 'failed', 'interrupted');
        recordSagaOutcome('purchase', outcome === 'refunded' ? 'compensated' : 'failed');
        settled += 1;
        this.deps.log.info({ purchaseId: p.id, outcome }, 'interrupted purchase settled');
      } catch (err) {
        this.deps.log.warn({ err: String(err), purchaseId: p.id }, 'refund of an interrupted purchase failed; will retry');
      }
    }
    return settled;
  }
}
