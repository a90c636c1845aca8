import { withTransaction } from '@ccs/shared';
import type { StoreDeps } from '../deps.js';
import type { GooglePlay } from '../google/index.js';
import { dueConsumes, findPurchaseById, recordConsume, type PurchaseRow } from '../repositories/purchases-repo.js';
import { googleCredentialsOf } from './google-credentials.js';

/** The wait before a failed consume is tried again: doubling from 15 s, at most an hour. */
const retryIn = (attempts: number) => Math.min(3_600_000, 15_000 * 2 ** Math.min(attempts, 8));

/**
 * Consumes one granted Google purchase (purchases.products.consume), so Google neither refunds it
 * (a purchase not acknowledged within three days is) nor lets it be bought again unconsumed.
 * Returns whether Google confirmed it; a failure is recorded for the sweeper.
 */
export async function consumeOne(deps: StoreDeps, google: GooglePlay, p: PurchaseRow): Promise<boolean> {
  const settings = (await deps.content.current(p.appId))?.store?.google;
  const credentials = await googleCredentialsOf(deps, p.appId);
  if (!settings || !credentials || !p.purchaseToken) {
    await recordConsume(deps.pool, p.id, { ok: false, retryInMs: retryIn(8) });
    return false;
  }
  const r = await google.client(credentials).consume(settings.package_name, p.storeProductId, p.purchaseToken);
  // Google refuses a second consume as an invalid state: already consumed is done.
  const ok = r.ok || r.error.kind === 'invalid';
  await recordConsume(deps.pool, p.id, ok ? { ok: true } : { ok: false, retryInMs: retryIn(1) });
  if (!ok) deps.log.warn({ purchaseId: p.id, failure: r.ok ? undefined : r.error.kind }, 'Google purchase not consumed yet; the sweeper retries');
  return ok;
}

/** Consumes a purchase just granted, after the answer (the sweeper catches what fails). */
export function consumeSoon(deps: StoreDeps, google: GooglePlay, appId: string, purchaseId: string): void {
  setImmediate(() => {
    void (async () => {
      const p = await findPurchaseById(deps.pool, appId, purchaseId);
      if (p && p.platform === 'google' && !p.consumedAt && p.state === 'granted') await consumeOne(deps, google, p);
    })().catch((err) => deps.log.warn({ err: String(err), purchaseId }, 'consume after the grant failed; the sweeper retries'));
  });
}

/** One pass of the consume sweeper: the due Google purchases, a few at a time, each claimed while it is consumed. */
export async function consumeDue(deps: StoreDeps, google: GooglePlay): Promise<number> {
  let done = 0;
  for (;;) {
    const claimed = await withTransaction(deps.pool, async (tx) => {
      const due = await dueConsumes(tx, 20);
      // Claimed for a while (the next attempt moved later) so another replica's pass leaves them.
      for (const p of due) await recordConsume(tx, p.id, { ok: false, retryInMs: 60_000 });
      return due;
    });
    if (claimed.length === 0) return done;
    for (const p of claimed) if (await consumeOne(deps, google, p)) done++;
    if (claimed.length < 20) return done;
  }
}
