import { withTransaction } from '@ccs/shared';
import type { StoreDeps } from '../deps.js';
import type { GooglePlay } from '../google/index.js';
import { claimConsume, dueConsumes, holdConsumes, recordConsume, type PurchaseRow } from '../repositories/purchases-repo.js';
import { googleCredentialsOf } from './google-credentials.js';

/** The longest wait between two attempts of one consume. */
const MAX_RETRY_MS = 3_600_000;

/**
 * How long a purchase is held while one consume of it is under way (longer than the bound on
 * any call to Google): no other attempt starts meanwhile; a process that dies mid-way leaves it
 * to the sweeper after this.
 */
const HOLD_MS = 60_000;

/**
 * Consumes one granted Google purchase (purchases.products.consume), so Google neither refunds it
 * (a purchase not acknowledged within three days is) nor lets it be bought again unconsumed.
 * The caller holds the purchase (holdConsumes, claimConsume). Returns whether Google confirmed
 * it; a failure is tried again after STORE_CONSUME_INTERVAL_MS, doubling with each failure up to
 * an hour.
 */
export async function consumeOne(deps: StoreDeps, google: GooglePlay, p: PurchaseRow): Promise<boolean> {
  const settings = (await deps.content.current(p.appId))?.store?.google;
  const credentials = await googleCredentialsOf(deps, p.appId);
  if (!settings || !credentials || !p.purchaseToken) {
    await recordConsume(deps.pool, p.id, { ok: false, firstRetryMs: MAX_RETRY_MS, maxRetryMs: MAX_RETRY_MS });
    return false;
  }
  const r = await google.client(credentials).consume(settings.package_name, p.storeProductId, p.purchaseToken);
  // Google refuses a second consume as an invalid state: already consumed is done.
  const ok = r.ok || r.error.kind === 'invalid';
  await recordConsume(
    deps.pool,
    p.id,
    ok ? { ok: true } : { ok: false, firstRetryMs: deps.config.STORE_CONSUME_INTERVAL_MS, maxRetryMs: MAX_RETRY_MS },
  );
  if (!ok) deps.log.warn({ purchaseId: p.id, failure: r.ok ? undefined : r.error.kind }, 'Google purchase not consumed yet; the sweeper retries');
  return ok;
}

/**
 * Consumes a purchase just granted, after the answer, unless a sweeper pass holds it already
 * (claimConsume: one of the two sends it). What fails is left to the sweeper.
 */
export function consumeSoon(deps: StoreDeps, google: GooglePlay, appId: string, purchaseId: string): void {
  setImmediate(() => {
    void (async () => {
      const p = await claimConsume(deps.pool, appId, purchaseId, HOLD_MS);
      if (p) await consumeOne(deps, google, p);
    })().catch((err) => deps.log.warn({ err: String(err), purchaseId }, 'consume after the grant failed; the sweeper retries'));
  });
}

/** One pass of the consume sweeper: the due Google purchases, a few at a time, each held while it is consumed. */
export async function consumeDue(deps: StoreDeps, google: GooglePlay): Promise<number> {
  let done = 0;
  for (;;) {
    const claimed = await withTransaction(deps.pool, async (tx) => {
      const due = await dueConsumes(tx, 20);
      // Held (the next attempt moved later) so another replica's pass and consumeSoon leave them.
      if (due.length)
        await holdConsumes(
          tx,
          due.map((p) => p.id),
          HOLD_MS,
        );
      return due;
    });
    if (claimed.length === 0) return done;
    for (const p of claimed) if (await consumeOne(deps, google, p)) done++;
    if (claimed.length < 20) return done;
  }
}
