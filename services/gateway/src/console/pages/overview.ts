import type { FastifyInstance } from 'fastify';
import { AppOverviewDocument } from '../../resources/studio-overview.js';
import { html, type SafeHtml } from '../html.js';
import { chart, notice, stat, table } from '../layout.js';
import { signedIn } from '../signed-in.js';

type Overview = AppOverviewDocument['data']['attributes'];

const hourLabel = (iso: string) => iso.slice(11, 16);

/** The headline figures. */
const stats = (a: Overview) =>
  html`<section class="stats">
    ${stat('Players', a.players.total, 'players-total')} ${stat('Registered', a.players.registered, 'players-registered')}
    ${stat('Guests', a.players.guests, 'players-guests')} ${stat('Openings (24 h)', a.openings_last_24h, 'openings-24h')}
    ${stat('Purchases', a.purchases.completed, 'purchases-completed')} ${stat('Unopened chests', a.chests.unopened, 'chests-unopened')}
    ${stat('Items granted', a.items_granted, 'items-granted')} ${stat('Collectors', a.collectors, 'collectors')}
  </section>`;

/** Openings and purchases hour by hour. */
function activity(hourly: Overview['hourly']): SafeHtml {
  return html`<section>
    <h2>Openings and purchases, last 24 hours</h2>
    ${
      hourly.some((h) => h.openings || h.purchases)
        ? ''
        : notice('empty', 'No openings or purchases in the last 24 hours yet: the chart fills as players open and buy chests.')
    }
    ${chart(
      'openings-chart',
      {
        type: 'bar',
        labels: hourly.map((h) => hourLabel(h.hour)),
        datasets: [
          { label: 'Openings', data: hourly.map((h) => h.openings) },
          { label: 'Purchases', data: hourly.map((h) => h.purchases) },
        ],
        phoneHorizontal: true,
      },
      'Openings and completed purchases per hour (UTC), oldest first.',
    )}
  </section>`;
}

/** Currency flows (the whole width: four columns of long reasons and amounts), then balances and content versions side by side. */
function economy(a: Overview): SafeHtml {
  const flows = a.currency_flows_24h;
  return html`<section>
      <h2>Currency sources and sinks (24 h)</h2>
      ${
        flows.length
          ? table(
              ['Currency', 'Reason', 'Credited', 'Debited'],
              flows.map((f) => [f.code, f.reason, f.credited, f.debited]),
              'flows',
            )
          : notice('empty', 'No currency moved in the last 24 hours.')
      }
    </section>
    <section class="grid-2">
      <div>
        <h2>Balances</h2>
        ${table(
          ['Currency', 'Total held', 'Holders'],
          a.balances.map((b) => [`${b.name} (${b.code})`, b.total, b.holders]),
          'balances',
        )}
      </div>
      <div>
        <h2>Content versions applied</h2>
        ${table(
          ['Service', 'Version'],
          Object.entries(a.content_versions).map(([s, v]) => [s, v ?? 'none yet']),
          'content-versions',
        )}
      </div>
    </section>`;
}

/** The overview page's body, from GET /api/v1/admin/overview. */
export const overviewBody = (a: Overview): SafeHtml => html`${stats(a)} ${activity(a.hourly)} ${economy(a)}`;

/** GET /console: the app at a glance. */
export function overviewRoutes(app: FastifyInstance) {
  app.get(
    '/',
    signedIn(async (p) => {
      const a = await p.api({ method: 'get', path: '/api/v1/admin/overview', success: 200, shape: AppOverviewDocument });
      if (!a.ok) return p.failed('Overview', '/console', a);
      return p.view('Overview', '/console', overviewBody(a.doc.data.attributes));
    }),
  );
}
