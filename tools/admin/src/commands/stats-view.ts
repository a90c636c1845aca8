import type { MessagingStats } from '@ccs/shared';
import { renderTable } from '../table.js';
import type { GatheredStats, Maybe } from './stats.js';

const when = (iso: string) => `${iso.slice(0, 16).replace('T', ' ')} UTC`;
const label = (name: string, text: string) => `${name.padEnd(16)}${text}`;
const orWhy = <T>(m: Maybe<T>, service: string, show: (v: T) => string) => (m.ok ? show(m.value) : `unknown (${service} ${m.reason})`);

/** The headline figures: players, chests, purchases, items and the grants still on their way. */
function headline(s: GatheredStats): string[] {
  const p = s.players.players;
  const pending =
    s.chests.ok && s.collections.ok
      ? `${s.chests.value.chests.opened - s.collections.value.openingsGranted} opening(s) not yet in collections ` +
        `(${s.chests.value.messaging.outboxBacklog.app} message(s) still in the chests outbox)`
      : 'unknown (needs chests and collections running)';
  return [
    label('players', `${p.total} (${p.registered} registered, ${p.guests} guests)`),
    label(
      'chests',
      orWhy(s.chests, 'chests', (c) => `${c.chests.unopened} unopened, ${c.chests.opened} opened (${c.openingsLast24h} in the last 24 h)`),
    ),
    label(
      'purchases',
      orWhy(
        s.chests,
        'chests',
        (c) =>
          `${c.purchases.completed} completed, ${c.purchases.unsettled} unsettled, ${c.purchases.refunded} refunded, ${c.purchases.failed} failed`,
      ),
    ),
    label(
      'items granted',
      orWhy(s.collections, 'collections', (c) => `${c.itemsGranted} from ${c.openingsGranted} openings, to ${c.collectors} players`),
    ),
    label('pending grants', pending),
  ];
}

/** One row per service: content version, outbox backlog (app/all) and age, parked messages (app/all). */
function serviceRows(s: GatheredStats): string[][] {
  const row = (service: string, m: Maybe<{ contentVersion: number | null; messaging: MessagingStats }>) => {
    if (!m.ok) return [service, m.reason, '', '', ''];
    const { outboxBacklog, outboxOldestAgeSeconds, parked } = m.value.messaging;
    return [
      service,
      String(m.value.contentVersion ?? 'none'),
      `${outboxBacklog.app}/${outboxBacklog.total}`,
      outboxOldestAgeSeconds === null ? '-' : `${outboxOldestAgeSeconds} s`,
      `${parked.app}/${parked.total}`,
    ];
  };
  return [row('players', { ok: true, value: s.players }), row('wallet', s.wallet), row('chests', s.chests), row('collections', s.collections)];
}

/** `stats` as text: the app, its headline figures, balance totals per currency, and each service's state. */
export function renderStats(appId: string, s: GatheredStats): string[] {
  const app = s.players.app;
  const lines = [`App "${app.name}" (${appId})${app.isDemo ? ', the demo app' : ''}, created ${when(app.createdAt)}`, '', ...headline(s), ''];
  if (s.wallet.ok) {
    const rows = s.wallet.value.balances.map((b) => [b.code, b.name, b.total, String(b.holders)]);
    lines.push(...renderTable(['currency', 'name', 'total balance', 'holders'], rows, [2, 3]), '');
  } else {
    lines.push(label('balances', `unknown (wallet ${s.wallet.reason})`), '');
  }
  lines.push(...renderTable(['service', 'content', 'outbox app/all', 'oldest', 'parked app/all'], serviceRows(s), [2, 4]));
  return lines;
}
