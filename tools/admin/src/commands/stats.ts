import { AdminChestsStats, AdminCollectionsStats, AdminPlayersStats, AdminWalletStats, AppError, type ReplyOf } from '@ccs/shared';
import { adminCall, requiredAppId, type AdminContext } from '../output.js';
import { renderStats } from './stats-view.js';

/** A service's stats, or why there are none (not running, not answering). */
export type Maybe<T> = { ok: true; value: T } | { ok: false; reason: string };

/** Everything `stats` gathered, one entry per service. */
export interface GatheredStats {
  players: ReplyOf<typeof AdminPlayersStats>;
  wallet: Maybe<ReplyOf<typeof AdminWalletStats>>;
  chests: Maybe<ReplyOf<typeof AdminChestsStats>>;
  collections: Maybe<ReplyOf<typeof AdminCollectionsStats>>;
}

/** One service's answer, or why there is none (a missing service does not fail the command). */
async function ask<T>(call: () => Promise<T>): Promise<Maybe<T>> {
  try {
    return { ok: true, value: await call() };
  } catch (err) {
    if (err instanceof AppError && (err.kind === 'unavailable' || err.kind === 'overloaded')) return { ok: false, reason: 'not running' };
    if (err instanceof AppError && err.kind === 'timeout') return { ok: false, reason: 'did not answer in 5 s' };
    throw err;
  }
}

/**
 * `stats --app <id>`: asks each service over NATS for its part (players first: it knows whether
 * the app exists), and prints them together; a service that is down is shown as such.
 */
export async function statsCommand(c: AdminContext, o: { app?: string }): Promise<number> {
  const appId = requiredAppId(o.app);
  const players = await c.bus.request(AdminPlayersStats, { appId }, adminCall(), { timeoutMs: 5000 });
  const [wallet, chests, collections] = await Promise.all([
    ask(() => c.bus.request(AdminWalletStats, { appId }, adminCall(), { timeoutMs: 5000 })),
    ask(() => c.bus.request(AdminChestsStats, { appId }, adminCall(), { timeoutMs: 5000 })),
    ask(() => c.bus.request(AdminCollectionsStats, { appId }, adminCall(), { timeoutMs: 5000 })),
  ]);
  const all: GatheredStats = { players, wallet, chests, collections };
  if (c.json) {
    const plain = (m: Maybe<unknown>) => (m.ok ? m.value : { unavailable: m.reason });
    c.io.out(JSON.stringify({ appId, players, wallet: plain(wallet), chests: plain(chests), collections: plain(collections) }, null, 2));
  } else {
    for (const line of renderStats(appId, all)) c.io.out(line);
  }
  return 0;
}
