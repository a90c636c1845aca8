/**
 * Trades between players (docs/content.md, "Trading"), against the durable floor: the offer (the
 * give copy into escrow, the offer's coin debited through the wallet, the trade and
 * `trade.offered`) and the accept (the want copy taken, the accept's coin debited, both copies
 * moved with `trade.completed`). One accepted trade is an offer and an accept: its cost is the
 * sum of the two rows (CPU per trade by process = the two rows' CPU per request added; trades
 * per second = 1 / (1/offers + 1/accepts) at the same connections).
 */
import { HOARD_CHEST, BENCH_CHEST_PRICE } from './content.js';
import { inParallel, JSONAPI, type Fixtures, type Player } from './fixtures.js';
import type { Scenario } from './scenarios.js';

/** Hoard openings (100 copies each) per trader: copies to give and to be asked for. */
const HOARDS = 4;
/** Traders added at a time. */
const TRADERS = 12;

/** One trade to make: who offers what to whom, for what. */
interface Unit {
  offerer: Player;
  partner: Player;
  give: string;
  want: string;
}

/**
 * The traders of a run and the copies each still holds free: every unit handed out takes its give
 * copy (and, for an accept, its want copy), and no offerer, partner and give come twice (one open
 * offer per pair and collectible).
 */
class Traders {
  private players: { p: Player; free: Map<string, number> }[] = [];
  private used = new Set<string>();
  private turn = 0;

  constructor(private readonly fx: Fixtures) {}

  get count() {
    return this.players.length;
  }

  /** TRADERS more players, each with HOARDS hoard openings in their collection and coins for their trades. */
  async grow(): Promise<void> {
    const more = await inParallel(4, Array.from({ length: TRADERS }), async () => {
      const p = await this.fx.register('trade');
      p.chests.shift();
      await this.fx.credit(p, HOARDS * BENCH_CHEST_PRICE + 20_000);
      await this.fx.buy(p, HOARD_CHEST.name, HOARDS);
      for (const chest of p.chests.splice(0)) await this.fx.open(p, chest);
      // Openings answer once collections applied their grants (bounded by GRANT_WAIT_MS), and the
      // content converts duplicates past their cap: the holdings are read until two reads agree.
      const free = new Map<string, number>();
      let last = -1;
      for (let tries = 0; ; tries++) {
        const col = await this.fx.api.call<{ data: { id: string; meta: { owned_count: number } }[]; meta: { total_copies: number } }>(
          'GET',
          '/api/v1/players/me/collection?page[limit]=100',
          { token: p.token },
        );
        if (col.meta.total_copies > 0 && col.meta.total_copies === last) {
          for (const c of col.data) if (c.meta.owned_count > 0) free.set(c.id, c.meta.owned_count);
          break;
        }
        last = col.meta.total_copies;
        if (tries > 120) throw new Error(`a trader's collection kept changing for 60 s (${last} copies)`);
        await new Promise((r) => setTimeout(r, 500));
      }
      return { p, free };
    });
    this.players.push(...more);
  }

  /** The next unit, round robin over the ordered pairs; undefined when none is left. */
  take(accept: boolean): Unit | undefined {
    const n = this.players.length;
    for (let tries = 0; tries < n * n; tries++) {
      const k = this.turn++;
      const o = this.players[k % n]!;
      const q = this.players[Math.floor(k / n) % n]!;
      if (o === q) continue;
      const give = [...o.free].find(([id, c]) => c > 0 && !this.used.has(`${o.p.id}:${q.p.id}:${id}`))?.[0];
      const want = [...q.free].find(([, c]) => c > 0)?.[0];
      if (!give || !want) continue;
      this.used.add(`${o.p.id}:${q.p.id}:${give}`);
      o.free.set(give, o.free.get(give)! - 1);
      if (accept) q.free.set(want, q.free.get(want)! - 1);
      return { offerer: o.p, partner: q.p, give, want };
    }
    return undefined;
  }
}

const offerBody = (u: Unit) =>
  JSON.stringify({
    data: { type: 'trade', attributes: { give: u.give, want: u.want }, relationships: { partner: { data: { type: 'player', id: u.partner.id } } } },
  });

/** POST /api/v1/trades: each request a new offer between two of the traders. */
export const tradeOffer: Scenario = {
  name: 'trade offer',
  floor: 'durable',
  async prepare({ api, fx, plan }) {
    const traders = new Traders(fx);
    const queue: Unit[] = [];
    let at = 0;
    return {
      load: {
        method: 'POST',
        remaining: () => queue.length - at,
        async topUp(seconds) {
          const units = Math.ceil(plan.maxRate.purchases * seconds);
          while (queue.length - at < units) {
            const u = traders.take(false);
            if (u) queue.push(u);
            else await traders.grow();
          }
        },
        next() {
          const u = queue[at++]!;
          return { path: '/api/v1/trades', headers: api.headers(u.offerer.token, JSONAPI), body: offerBody(u) };
        },
      },
      async describe() {
        return `POST /api/v1/trades, each request a new offer (one coin, the give copy into escrow) between ${traders.count} traders (each the copies of ${HOARDS} Bench Hoard openings); ${at.toLocaleString('en-US')} of ${queue.length.toLocaleString('en-US')} prepared`;
      },
    };
  },
};

/** POST /api/v1/trades/{id}/accept: each request accepts an offer made for it before the run. */
export const tradeAccept: Scenario = {
  name: 'trade accept',
  floor: 'durable',
  async prepare({ api, fx, plan }) {
    const traders = new Traders(fx);
    const queue: { id: string; partner: Player }[] = [];
    let at = 0;
    return {
      load: {
        method: 'POST',
        remaining: () => queue.length - at,
        async topUp(seconds) {
          const units = Math.ceil(plan.maxRate.purchases * seconds);
          const wanted: Unit[] = [];
          while (queue.length - at + wanted.length < units) {
            const u = traders.take(true);
            if (u) wanted.push(u);
            else await traders.grow();
          }
          const made = await inParallel(8, wanted, (u) =>
            api.call<{ data: { id: string } }>('POST', '/api/v1/trades', { body: JSON.parse(offerBody(u)), token: u.offerer.token }),
          );
          made.forEach((m, i) => queue.push({ id: m.data.id, partner: wanted[i]!.partner }));
        },
        next() {
          const { id, partner } = queue[at++]!;
          return { path: `/api/v1/trades/${id}/accept`, headers: api.headers(partner.token) };
        },
      },
      async describe() {
        return `POST /api/v1/trades/{id}/accept, each request an open offer made before the run (the want copy taken, one coin, both copies moved, trade.completed); with "trade offer" one accepted trade: add the two rows' CPU per request, trades/s = 1/(1/offers + 1/accepts); ${at.toLocaleString('en-US')} of ${queue.length.toLocaleString('en-US')} prepared over ${traders.count} traders`;
      },
    };
  },
};
