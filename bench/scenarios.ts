/**
 * What the bench measures. Every scenario names its floor: the cheapest path of the same kind,
 * measured in the same run (bench/floor-server.ts and bench/floor-responder.ts):
 *
 * - echo:    HTTP → one NATS request-reply → echo.          For reads answered from caches.
 * - pg:      … → one SELECT by primary key.                  For reads and writes needing Postgres.
 * - durable: … → one UPDATE + INSERT transaction → JetStream publish awaiting its PubAck.
 *            For operations that must hand a durable message on (purchase, opening, registration).
 * - saga:    … → one statement consuming a row and writing its outbox row → the message published
 *            awaiting its PubAck → two pull consumers in processes of their own applying it as one
 *            row each, batched (bench/floor-consumer.ts); counted until they drained. The least an
 *            opening can cost in this design: a second floor for the writes that run the saga
 *            (`saga`), and `saga ×10` (10 rows, 10 messages) for the batch of 10.
 */
import { Api, Fixtures, JSONAPI, purchaseBody, registrationBody, type Player } from './fixtures.js';
import type { Load } from './measure.js';
import type { ApplePki } from '../test/support/store/apple-pki.js';
import { storePurchase } from './store-scenario.js';
import { tradeAccept, tradeOffer } from './trade-scenario.js';

export type FloorKind = 'echo' | 'pg' | 'page' | 'durable' | 'saga' | 'saga10';

export interface Floor {
  name: string;
  path: string;
  what: string;
  /** Its messages are applied by the saga floor's consumers: a run counts until they drained. */
  drains?: boolean;
  /** Another floor its rows are also compared with (the saga floors with the durable one: the design's tax). */
  versus?: FloorKind;
}

export const FLOORS: Record<FloorKind, Floor> = {
  echo: { name: 'floor: echo', path: '/echo', what: 'Fastify route → NATS request-reply → echo handler (separate process)' },
  pg: { name: 'floor: pg', path: '/pg', what: '… → responder runs one SELECT by primary key (pg.Pool of 10) and answers the row' },
  page: {
    name: 'floor: pg page',
    path: '/page',
    what: '… → responder runs one SELECT of 100 consecutive rows and answers them (no resource built, no token, no JSON:API): measured only when named (BENCH_ONLY=page), the least a page of 100 can cost',
  },
  durable: {
    name: 'floor: durable',
    path: '/durable',
    what: '… → responder runs one transaction (UPDATE one row, INSERT one row, COMMIT), publishes to JetStream and awaits the PubAck',
  },
  saga: {
    name: 'floor: saga',
    path: '/saga',
    what: "… → responder runs ONE statement (UPDATE one row, INSERT its outbox row), publishes the message to JetStream awaiting its PubAck and answers (the published rows marked in one asynchronous UPDATE every 25 ms); two pull consumers in processes of their own (saga items, saga experience) apply each pull's messages in one INSERT … unnest … ON CONFLICT DO NOTHING and ack once; measured until both drained (the CPU of the drain counted): the least an opening can cost in this design",
    drains: true,
    versus: 'durable',
  },
  saga10: {
    name: 'floor: saga ×10',
    path: '/saga10',
    what: 'the saga floor for 10 rows and 10 messages a request (one statement, 10 PubAcks awaited together, the consumers applying 10 rows each): the least a batch of 10 openings can cost',
    drains: true,
    versus: 'durable',
  },
};

/** What the preparation must provision for, from the run's settings. */
export interface Plan {
  /** Highest openings and purchases per second assumed: each run finds at least rate × duration fresh units. */
  maxRate: { openings: number; purchases: number };
  /** The most connections of the run (the credit scenario gives each its own wallet). */
  connections: number;
  /** argon2 settings the players service runs with (registration's note). */
  argon2: { memoryKib: number; timeCost: number };
}

export interface Context {
  api: Api;
  fx: Fixtures;
  plan: Plan;
  /** The certificate authority the bench's store trusts: it signs the App Store transactions. */
  pki: ApplePki;
}

export interface Scenario {
  name: string;
  floor: FloorKind;
  /** The saga floor it is also compared with (the writes that run the opening's saga). */
  saga?: FloorKind;
  /** Measured again in the scale-out phase (two replicas of chests and of collections). */
  scale?: boolean;
  /** Prepares what it needs through the API and returns the request to load the stack with. */
  prepare(c: Context): Promise<Prepared>;
}

export interface Prepared {
  load: Load;
  /** What one answer (or the setup) holds, for the notes; asked once, before measuring. */
  describe?(): Promise<string>;
}

const get = (path: string, headers: Record<string, string>): Load => ({ method: 'GET', path, headers });

/**
 * The own inventory of a player holding `n` unopened chests: the default page (100), or pages of
 * `limit` (so inventories of different sizes answer documents of the same size: what grows then is
 * only the inventory behind the page).
 */
const inventory = (n: number, scale = false, limit?: number): Scenario => ({
  name: `own inventory ${n}${limit ? `, pages of ${limit}` : ''}`,
  floor: 'pg',
  scale,
  async prepare({ api, fx }) {
    const p = await fx.inventoryPlayer(n);
    const path = `/api/v1/players/me/chests${limit ? `?page%5Blimit%5D=${limit}` : ''}`;
    return {
      load: get(path, api.headers(p.token)),
      async describe() {
        const r = await api.call<{ data: unknown[]; meta: { total_chests: number } }>('GET', path, { token: p.token });
        return `GET ${path} holding ${n} chests: the answer lists ${r.data.length}, meta.total_chests ${r.meta.total_chests}`;
      },
    };
  },
});

/** The calling player's collection, for a player owning `items` copies. */
const collection = (items: number): Scenario => ({
  name: `collection ${items} items`,
  floor: 'pg',
  async prepare({ api, fx }) {
    const { player } = await fx.collector(items);
    return {
      load: get('/api/v1/players/me/collection', api.headers(player.token)),
      async describe() {
        const r = await api.call<{ data: unknown[]; meta: { total_count: number; total_copies: number } }>('GET', '/api/v1/players/me/collection', {
          token: player.token,
        });
        return `GET /api/v1/players/me/collection of a player owning ${items} copies: ${r.data.length} collectibles in the page, meta.total_count ${r.meta.total_count}, meta.total_copies ${r.meta.total_copies}`;
      },
    };
  },
});

export const SCENARIOS: Scenario[] = [
  {
    name: 'catalog list',
    floor: 'echo',
    async prepare({ api }) {
      return {
        load: get('/api/v1/chests', api.headers()),
        async describe() {
          const r = await api.call<{ data: unknown[] }>('GET', '/api/v1/chests');
          return `GET /api/v1/chests, anonymous with the apikey: ${r.data.length} chest types (the default 5 and the bench's 2)`;
        },
      };
    },
  },
  {
    name: 'catalog list with a token',
    floor: 'echo',
    async prepare({ api, fx, plan }) {
      // As many players as connections, round robin: the catalog's per-player part (which
      // currencies the compliance gate lets each spend) for many players, not one.
      const players = await fx.creditors(plan.connections);
      let turn = 0;
      return {
        load: { method: 'GET', next: () => ({ path: '/api/v1/chests', headers: api.headers(players[turn++ % players.length]!.token) }) },
        async describe() {
          const r = await api.call<{ data: { meta: { purchasable?: Record<string, boolean> } }[] }>('GET', '/api/v1/chests', {
            token: players[0]!.token,
          });
          return `GET /api/v1/chests with a player's token (meta.purchasable: ${JSON.stringify(r.data[0]?.meta.purchasable ?? null)}), round robin over ${players.length} players`;
        },
      };
    },
  },
  {
    name: 'one collectible with progress',
    floor: 'pg',
    scale: true,
    async prepare({ api, fx }) {
      const { player, owned } = await fx.collector(10);
      const path = `/api/v1/collectibles/${owned}`;
      return {
        load: get(path, api.headers(player.token)),
        async describe() {
          type Progress = { owned_count: number; collection_progress?: { current_item: number; total_items: number } };
          const r = await api.call<{ meta: Progress }>('GET', path, { token: player.token });
          const m = r.meta;
          return `GET ${path} with the token of a player owning 10 items: owned_count ${m.owned_count}, progress ${m.collection_progress?.current_item}/${m.collection_progress?.total_items}`;
        },
      };
    },
  },
  inventory(10),
  inventory(100, true),
  inventory(1000),
  inventory(1000, false, 10),
  collection(10),
  collection(10_000),
  {
    name: 'credit',
    floor: 'pg',
    async prepare({ api, fx, plan }) {
      // One wallet per connection, as credits of many players would be: the same wallet for
      // every connection would measure the wait for its row lock instead.
      const players = await fx.creditors(plan.connections);
      const { coinsId } = await fx.catalog();
      const path = `/api/v1/currencies/${coinsId}/credit`;
      const body = JSON.stringify({ amount: '0.01' });
      let turn = 0;
      return {
        load: { method: 'POST', next: () => ({ path, headers: api.headers(players[turn++ % players.length]!.token, 'application/json'), body }) },
        async describe() {
          return `POST ${path.replace(coinsId, '{coins}')} {"amount":"0.01"} (application/json), round robin over ${players.length} players`;
        },
      };
    },
  },
  {
    name: 'purchase',
    floor: 'durable',
    saga: 'saga',
    async prepare({ api, fx, plan }) {
      const perPlayer = 500;
      const woodenId = await fx.chestTypeId('Wooden Chest');
      const players: Player[] = [];
      const budget: number[] = [];
      const body = JSON.stringify(purchaseBody(1));
      let turn = 0;
      let left = 0;
      return {
        load: {
          method: 'POST',
          remaining: () => left,
          async topUp(seconds) {
            const units = Math.ceil(plan.maxRate.purchases * seconds);
            if (left >= units) return;
            const more = await fx.addPurchasers(Math.ceil((units - left) / perPlayer), perPlayer);
            players.push(...more);
            budget.push(...more.map(() => perPlayer));
            left += more.length * perPlayer;
          },
          // Round robin over the players that can still afford (and hold) one more chest.
          next() {
            while (budget[turn % players.length] === 0) turn++;
            const i = turn++ % players.length;
            budget[i]! -= 1;
            left -= 1;
            return { path: `/api/v1/chests/${woodenId}/purchase`, headers: api.headers(players[i]!.token, JSONAPI), body };
          },
        },
        async describe() {
          return `POST /api/v1/chests/{Wooden Chest}/purchase quantity 1, round robin over the players with coins and room left (${players.length} players of ${perPlayer} purchases each were prepared)`;
        },
      };
    },
  },
  {
    name: 'chest opening',
    floor: 'durable',
    saga: 'saga',
    scale: true,
    async prepare({ api, fx, plan }) {
      // One player's openings run one at a time (their seed pair's nonce orders them), so the
      // chests are spread over enough players that 50 connections rarely wait on one another.
      const perPlayer = 100;
      const queue: { chest: string; player: Player }[] = [];
      let players = 0;
      let at = 0;
      return {
        load: {
          method: 'GET',
          remaining: () => queue.length - at,
          async topUp(seconds) {
            const units = Math.ceil(plan.maxRate.openings * seconds);
            const left = queue.length - at;
            if (left >= units) return;
            const more = await fx.addOpeners(Math.ceil((units - left) / perPlayer), perPlayer);
            players += more.length;
            // Interleaved, so concurrent openings belong to different players, as in real traffic.
            for (let k = 0; k < perPlayer; k++) for (const p of more) if (p.chests[k]) queue.push({ chest: p.chests[k]!, player: p });
          },
          next() {
            const { chest, player } = queue[at++]!;
            return { path: `/api/v1/chests/${chest}/open`, headers: api.headers(player.token) };
          },
        },
        async describe() {
          return `GET /api/v1/chests/{id}/open, each request a wooden chest (3 items) never opened before; ${at.toLocaleString('en-US')} opened of ${queue.length.toLocaleString('en-US')} prepared over ${players} players (before each run, enough for the assumed peak rate × its duration)`;
        },
      };
    },
  },
  {
    name: 'batch opening (10 chests)',
    floor: 'durable',
    saga: 'saga10',
    async prepare({ api, fx, plan }) {
      const perPlayer = 100;
      const batch = 10;
      const queue: { chests: string[]; player: Player }[] = [];
      let players = 0;
      let at = 0;
      return {
        load: {
          method: 'POST',
          remaining: () => queue.length - at,
          async topUp(seconds) {
            // As many chests as single openings at the assumed peak rate: batches are cheaper, not fewer.
            const units = Math.ceil((plan.maxRate.openings * seconds) / batch);
            const left = queue.length - at;
            if (left >= units) return;
            const more = await fx.addOpeners(Math.ceil(((units - left) * batch) / perPlayer), perPlayer);
            players += more.length;
            for (let k = 0; k < perPlayer; k += batch)
              for (const p of more) if (p.chests[k + batch - 1]) queue.push({ chests: p.chests.slice(k, k + batch), player: p });
          },
          next() {
            const { chests, player } = queue[at++]!;
            const body = JSON.stringify({ data: chests.map((id) => ({ type: 'chest', id })) });
            return { path: '/api/v1/chests/open', headers: api.headers(player.token, JSONAPI), body };
          },
        },
        async describe() {
          return `POST /api/v1/chests/open with 10 wooden chests (30 items) per request, all or nothing; chests opened per second = req/s × 10, items granted per second = req/s × 30 (against the single opening's req/s × 3); ${at.toLocaleString('en-US')} batches of ${queue.length.toLocaleString('en-US')} prepared over ${players} players`;
        },
      };
    },
  },
  storePurchase,
  tradeOffer,
  tradeAccept,
  {
    name: 'registration (argon2 minimal)',
    floor: 'durable',
    saga: 'saga',
    async prepare({ api, fx, plan }) {
      let n = 0;
      return {
        load: {
          method: 'POST',
          next: () => ({
            path: '/api/v1/players/register',
            headers: api.headers(undefined, JSONAPI),
            body: JSON.stringify(registrationBody(`bench-${fx.runId}-reg-${++n}@example.com`)),
          }),
        },
        async describe() {
          const { memoryKib, timeCost } = plan.argon2;
          return `POST /api/v1/players/register, a new email each request; argon2 set aside: players runs with ARGON2_MEMORY_KIB=${memoryKib} ARGON2_TIME_COST=${timeCost}, the cheapest its config accepts (defaults 19456 and 2)`;
        },
      };
    },
  },
];
