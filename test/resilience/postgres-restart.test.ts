import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { healthSubject } from '@ccs/shared';
import { privatePostgresUnavailable, startPrivatePostgres, type PrivatePostgres } from '@ccs/shared/testing';
import { eventually, startStack, type TestStack } from '../support/stack.js';
import { defaultCatalogIds, inventory, open, purchase } from '../../services/chests/test/support/chests.js';
import { expectNothingHalfApplied, prepareBurst, runBurst, tally, type BurstResult, type BurstSetup } from './support/db-burst.js';
import { startReplica, type Replica } from './support/replica.js';

// A Postgres restart, on a throwaway cluster of this machine's binaries (the shared one is never
// restarted): `pg_ctl restart -m immediate` while openings and credits run. chests and wallet run
// as their own processes (`services/<name>/src/main.ts`, as deployed), the others and the gateway
// in this process. The pools' error guard must keep them alive: an idle client's error event
// without a listener ("Unhandled 'error' event … on Client instance") would kill the process.

const unavailable = privatePostgresUnavailable();
const errorsOfProcess: unknown[] = [];
const onEscape = (err: unknown) => void errorsOfProcess.push(err);

describe.skipIf(unavailable !== undefined)(`Postgres restarted immediately under load${unavailable ? ` (skipped: ${unavailable})` : ''}`, () => {
  let cluster: PrivatePostgres;
  let stack: TestStack;
  let replicas: Replica[] = [];
  let setup: BurstSetup;

  /** Each child service is still running, and never printed an unhandled error. */
  function expectReplicasAlive() {
    for (const r of replicas) {
      expect({ replica: r.label, exitCode: r.child.exitCode, signal: r.child.signalCode }, r.output().slice(-3000)).toEqual({
        replica: r.label,
        exitCode: null,
        signal: null,
      });
      expect(r.output()).not.toMatch(/Unhandled 'error' event|uncaughtException|Connection terminated unexpectedly\n\s+at/);
    }
  }
  const readyz = async (r: Replica) => (await fetch(`${r.healthUrl}/readyz`)).status;
  const gatewayReadyz = async () => (await stack.inject({ method: 'GET', url: '/readyz' })).statusCode;
  const creditOnce = (amount = '0.01') => {
    const p = setup.players[0]!.player;
    return stack.inject({
      method: 'POST',
      url: `/api/v1/currencies/${setup.coinsId}/credit`,
      headers: { apikey: p.apiKey, authorization: `Bearer ${p.token}`, 'content-type': 'application/json' },
      payload: { amount },
    });
  };

  beforeAll(async () => {
    process.on('uncaughtException', onEscape);
    process.on('unhandledRejection', onEscape);
    cluster = await startPrivatePostgres();
    stack = await startStack({ services: ['players', 'collections'], env: { DATABASE_URL: cluster.url, GRANT_WAIT_MS: '100' } });
    replicas = [await startReplica('wallet', stack.env, 'wallet'), await startReplica('chests', stack.env, 'chests')];
    await Promise.all(replicas.map((r) => r.waitReady(60_000)));
    setup = await prepareBurst(stack, { players: 4, chestsEach: 40 });
  }, 150_000);

  afterAll(async () => {
    process.off('uncaughtException', onEscape);
    process.off('unhandledRejection', onEscape);
    await Promise.all(replicas.map((r) => r.terminate(10_000)));
    await stack?.close();
    await cluster?.destroy();
  }, 60_000);

  it('pg_ctl restart -m immediate mid-burst: no service exits, only 200 or a retryable 503/504, nothing half-applied, recovered by itself', async () => {
    let restart: Promise<void> | undefined;
    let restartBegan = 0;
    let restartEnded = 0;
    const result: BurstResult = await runBurst(stack, setup, {
      keyedCredits: 40,
      unkeyedCredits: 20,
      deadline: Date.now() + 60_000,
      onAnswer: (n) => {
        if (n !== 80) return;
        restartBegan = Date.now();
        restart = cluster.restart('immediate').then(() => void (restartEnded = Date.now()));
      },
    });
    expect(restart, 'the burst ended before the restart was due').toBeDefined();
    await restart;
    const counts = tally(result.answers);
    // The restart came in the middle: answers before it and after it was back.
    expect(result.answers.filter((a) => a.at < restartBegan).length, JSON.stringify(counts)).toBeGreaterThan(40);
    expect(result.answers.filter((a) => a.at > restartEnded).length, JSON.stringify(counts)).toBeGreaterThan(40);
    // The whole log: the clients' reconnection errors after the restart can push its line out of a tail.
    expect(cluster.log(Infinity)).toMatch(/immediate shutdown request|database system was interrupted|not properly shut down/);

    expectReplicasAlive();
    expect(errorsOfProcess).toEqual([]);
    await expectNothingHalfApplied(stack, setup, result);

    // Ready again, every service, without anyone restarting them.
    await eventually(async () => {
      expect(await gatewayReadyz()).toBe(200);
      for (const r of replicas) expect(await readyz(r)).toBe(200);
    }, 15_000);
    expect((await creditOnce()).statusCode).toBe(200);
    expectReplicasAlive();
    expect(errorsOfProcess).toEqual([]);
  }, 150_000);

  it('while Postgres is down: not ready, requests answer 503 within the lost-database window; once it is back: ready and 200 again', async () => {
    const buyer = setup.players[2]!.player;
    const wooden = (await defaultCatalogIds(stack))['Wooden Chest']!;
    const chestsBefore = (await inventory(stack, buyer)).data.length as number;
    await cluster.stop('immediate');
    try {
      await eventually(async () => {
        for (const r of replicas) expect(await readyz(r)).toBe(503);
        expect(await gatewayReadyz()).toBe(503);
        const h = await stack.bus.request(healthSubject('players'), {}, { requestId: 'ready-players' });
        expect(h).toEqual({ service: 'players', ok: false });
      }, 10_000);
      // Each write (keyed: the client's key, or the gateway's retry key) is handled again for the
      // services' window of a lost database (3 s), then answered 503 database_unavailable: the
      // service's own answer. A request that waited out the gateway's bound (5 s) would be its
      // 504 service_timeout instead, so the code shows which bound ended the wait.
      const res = await creditOnce();
      expect(res.statusCode, res.body).toBe(503);
      expect(res.json().errors[0]).toMatchObject({ status: '503', code: 'database_unavailable' });
      const chest = setup.players[1]!.chests[0]!; // opened in the burst: the answer needs the database
      const opened = await open(stack, setup.players[1]!.player, chest, { idempotencyKey: 'down-1' });
      expect(opened.statusCode, opened.body).toBe(503);
      expect(opened.json().errors[0]).toMatchObject({ status: '503', code: 'database_unavailable' });
      // A purchase nests calls that each repeat on a lost database (chests, then players' compliance
      // read and wallet's debit): the deadline passed down with each call keeps them within the
      // gateway's bound, so the client gets 503 with Retry-After (send it again), never a 504.
      const bought = await purchase(stack, buyer, wooden, 'coins', 1, 'down-buy-1');
      expect(bought.statusCode, bought.body).toBe(503);
      expect(bought.headers['retry-after'], 'a 503 says when to try again').toBeDefined();
    } finally {
      await cluster.start();
    }
    await eventually(async () => {
      for (const r of replicas) expect(await readyz(r)).toBe(200);
      expect(await gatewayReadyz()).toBe(200);
    }, 15_000);
    const res = await creditOnce();
    expect(res.statusCode, res.body).toBe(200);
    // The purchase sent again with its key applies once: one chest more, and a second retry answers the same.
    const bought = await purchase(stack, buyer, wooden, 'coins', 1, 'down-buy-1');
    expect(bought.statusCode, bought.body).toBe(201);
    const again = await purchase(stack, buyer, wooden, 'coins', 1, 'down-buy-1');
    expect(again.json().data, again.body).toEqual(bought.json().data);
    expect((await inventory(stack, buyer)).data.length).toBe(chestsBefore + 1);
    expectReplicasAlive();
    expect(errorsOfProcess).toEqual([]);
  }, 60_000);
});
