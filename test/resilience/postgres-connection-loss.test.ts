import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { healthSubject } from '@ccs/shared';
import { eventually, startStack, type TestStack } from '../support/stack.js';
import { cents, expectNothingHalfApplied, prepareBurst, runBurst, tally, type BurstSetup } from './support/db-burst.js';

// The four services run in this process against the shared Postgres, and every backend of the
// stack's database is terminated again and again (pg_terminate_backend, what a restart or a
// failover does to each connection) while a burst of openings and credits runs through the
// gateway. Before the checked-out clients were guarded, pg emitted 'error' on a client nobody
// listened to and the process died (chests and wallet first).

const errorsOfProcess: unknown[] = [];
const onEscape = (err: unknown) => void errorsOfProcess.push(err);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** The sum of a counter's samples, all labels, in Prometheus text. */
const sumOf = (text: string, name: string) =>
  text
    .split('\n')
    .filter((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `))
    .reduce((n, l) => n + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);

describe('Postgres connections terminated under a burst of openings and credits', () => {
  let stack: TestStack;
  let admin: pg.Client;
  let setup: BurstSetup;

  beforeAll(async () => {
    process.on('uncaughtException', onEscape);
    process.on('unhandledRejection', onEscape);
    stack = await startStack({ env: { GRANT_WAIT_MS: '100' } });
    // The killer connects to the maintenance database, not to the one it empties.
    const url = new URL(stack.env.DATABASE_URL!);
    url.pathname = '/postgres';
    admin = new pg.Client({ connectionString: url.toString() });
    await admin.connect();
    // 200 openings and 300 credits at once, enough to fill the pools while Postgres is away.
    setup = await prepareBurst(stack, { players: 4, chestsEach: 50 });
  }, 90_000);

  afterAll(async () => {
    process.off('uncaughtException', onEscape);
    process.off('unhandledRejection', onEscape);
    await admin?.end();
    await stack?.close();
  });

  it('never crashes, answers only 200 or a retryable 503/504, applies nothing by halves, and recovers by itself', async () => {
    const database = new URL(stack.env.DATABASE_URL!).pathname.slice(1);
    let killing = true;
    let rounds = 0;
    let terminated = 0;
    // The storm lasts 20 s (or until the burst ends): long enough for every request to meet lost
    // connections, short enough that a machine whose connections take long to set up (tens of ms
    // on a loaded VM) still finishes the burst after it, within the deadline.
    const stormEnds = Date.now() + 20_000;
    const killer = (async () => {
      while (killing && Date.now() < stormEnds) {
        const r = await admin.query<{ pg_terminate_backend: boolean }>(
          'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
          [database],
        );
        rounds++;
        terminated += r.rows.filter((x) => x.pg_terminate_backend).length;
        await sleep(80 + Math.random() * 120);
      }
    })();

    let result;
    try {
      result = await runBurst(stack, setup, { keyedCredits: 50, unkeyedCredits: 25, deadline: Date.now() + 60_000 });
    } finally {
      killing = false;
      await killer;
    }
    const counts = tally(result.answers);
    // The connections really were lost while requests ran, and requests met a lost one: answered
    // 503 database_unavailable, or (reads and keyed writes, the gateway's retry key included)
    // handled again by the service once its pool had a live connection.
    expect(rounds).toBeGreaterThan(10);
    expect(terminated).toBeGreaterThan(rounds);
    const repeats = await Promise.all(
      (['chests', 'wallet'] as const).map(async (name) =>
        sumOf(await stack.services[name]!.deps.metrics.registry.metrics(), 'ccs_nats_handler_repeats_total'),
      ),
    );
    expect((counts['503 database_unavailable'] ?? 0) + repeats[0]! + repeats[1]!, JSON.stringify({ counts, repeats })).toBeGreaterThan(0);
    expect(errorsOfProcess).toEqual([]);

    await expectNothingHalfApplied(stack, setup, result);

    // Recovered on its own: every service ready again, and a new credit answers 200.
    await eventually(async () => {
      const res = await stack.inject({ method: 'GET', url: '/readyz' });
      expect(res.statusCode, res.body).toBe(200);
    }, 10_000);
    for (const name of ['players', 'wallet', 'chests', 'collections']) {
      const h = await stack.bus.request(healthSubject(name), {}, { requestId: `ready-${name}` });
      expect(h).toEqual({ service: name, ok: true });
    }
    const p = setup.players[0]!.player;
    const res = await stack.inject({
      method: 'POST',
      url: `/api/v1/currencies/${setup.coinsId}/credit`,
      headers: { apikey: p.apiKey, authorization: `Bearer ${p.token}`, 'content-type': 'application/json' },
      payload: { amount: '1.00' },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(cents(res.json().data.balance.amount)).toBeGreaterThan(cents('1500.00'));
    expect(errorsOfProcess).toEqual([]);
  }, 120_000);
});
