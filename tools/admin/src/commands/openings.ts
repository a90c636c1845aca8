import { AdminListOpenings, AppError, type OpeningView } from '@ccs/shared';
import { AdminFailure, adminCall, findPlayerOrFail, required, requiredAppId, UsageError, type AdminContext } from '../output.js';
import { renderTable } from '../table.js';

/** A whole number option within bounds, or a UsageError naming it. */
function count(value: string | undefined, flag: string, fallback: number, min: number, max: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < min || n > max) throw new UsageError(`--${flag} takes a whole number from ${min} to ${max}, not "${value}"`);
  return n;
}

/** One opening as a table row: when, what, with which rules, seed and pity. */
function row(o: OpeningView): string[] {
  const byRarity = new Map<string, number>();
  for (const it of o.items) byRarity.set(it.rarity, (byRarity.get(it.rarity) ?? 0) + 1);
  const items = [...byRarity].map(([r, n]) => `${n} ${r}`).join(', ');
  const pity = o.pity ? `${o.pity.opensSinceBefore}→${o.pity.opensSinceAfter}${o.pity.triggered ? ' (guaranteed)' : ''}` : '-';
  const fairness = o.fairness ? `${o.fairness.serverSeedHash.slice(0, 12)}… #${o.fairness.nonce}` : '-';
  // `?`: not known (collections has not applied the grant yet, or did not answer); `-`: none.
  const converted = !o.conversions ? '?' : o.conversions.length ? o.conversions.map((c) => `${c.amount} ${c.currency}`).join(', ') : '-';
  return [o.openedAt.replace('T', ' ').slice(0, 19), o.openingId, String(o.rulesVersion), items, pity, fairness, converted];
}

/**
 * `openings --app <id> --player <id|email> [--limit 20] [--offset 0]`: a player's openings, newest
 * first, with the rules version each used, its seed commitment and nonce, the pity counter before
 * and after, and duplicate conversions: what a support agent needs to answer "was I cheated?".
 */
export async function openingsCommand(c: AdminContext, o: { app?: string; player?: string; limit?: string; offset?: string }): Promise<number> {
  const appId = requiredAppId(o.app);
  const who = required(o.player, 'player');
  const page = { limit: count(o.limit, 'limit', 20, 1, 1000), offset: count(o.offset, 'offset', 0, 0, 1_000_000_000) };
  const player = await findPlayerOrFail(c, appId, who);
  let result;
  try {
    result = await c.bus.request(AdminListOpenings, { appId, playerId: player.playerId, page }, adminCall(), { timeoutMs: 5000 });
  } catch (err) {
    if (err instanceof AppError && (err.kind === 'unavailable' || err.kind === 'overloaded' || err.kind === 'timeout'))
      throw new AdminFailure('The chests service did not answer: start the stack with `npm start`.');
    throw err;
  }
  if (c.json) {
    c.io.out(JSON.stringify({ appId, player, page, total: result.total, openings: result.openings }, null, 2));
    return 0;
  }
  c.io.out(`Player ${player.playerId} (${player.email ?? 'guest'}): ${result.total} opening${result.total === 1 ? '' : 's'}, newest first`);
  if (result.openings.length === 0) return 0;
  const header = ['opened at (UTC)', 'opening', 'rules', 'items', 'pity', 'seed hash · nonce', 'converted'];
  for (const line of renderTable(header, result.openings.map(row), [2])) c.io.out(line);
  const shown = page.offset + result.openings.length;
  if (shown < result.total) c.io.out(`… ${result.total - shown} more: --offset ${shown}`);
  return 0;
}
