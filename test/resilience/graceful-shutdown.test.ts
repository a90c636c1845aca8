import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, startStack, type TestStack } from '../support/stack.js';
import { expectError } from '../support/jsonapi-schema.js';
import { registerPlayer, wallet, type Player } from '../../services/chests/test/support/chests.js';
import { holdLock, waitForLockWaiters, type HeldLock } from './support/held-lock.js';
import { logEntries, startReplica, type Replica } from './support/replica.js';

// A request stays in hand for as long as the test holds the player's balance row locked: the
// wallet's credit handler waits on that lock, on the real database.

/** Whether a new TCP connection to the port is refused. */
function refused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect({ host: '127.0.0.1', port });
    s.once('connect', () => (s.destroy(), resolve(false)));
    s.once('error', () => resolve(true));
  });
}

describe('graceful shutdown on SIGTERM', () => {
  let stack: TestStack;
  let player: Player;
  let coins: string;
  const replicas: Replica[] = [];
  const locks: HeldLock[] = [];

  beforeAll(async () => {
    stack = await startStack({ services: ['players', 'chests', 'collections'] });
    const w = await startReplica('wallet', stack.env, 'wallet#1');
    replicas.push(w);
    await w.waitReady();
    player = await registerPlayer(stack);
    coins = await eventually(async () => {
      const balances = await wallet(stack, player);
      expect(balances.coins!.balance).toBe('1500.00');
      return balances.coins!.id;
    }, 20_000);
  });
  afterAll(async () => {
    for (const l of locks) await l.release();
    await Promise.all(replicas.map((r) => r.terminate(5000)));
    await stack?.close();
  });

  const lockBalance = async () => {
    const l = await holdLock(stack.env.DATABASE_URL!, 'SELECT 1 FROM wallet.balances WHERE player_id = $1 FOR UPDATE', [player.id]);
    locks.push(l);
    return l;
  };
  const creditHeaders = () => ({ apikey: player.apiKey, authorization: `Bearer ${player.token}`, 'content-type': 'application/json' });
  const credit = (amount: string) =>
    stack.inject({ method: 'POST', url: `/api/v1/currencies/${coins}/credit`, headers: creditHeaders(), payload: { amount } });

  it('a service replica turns not ready, takes no new request, answers the one in hand and exits 0', async () => {
    const replica = replicas[0]!;
    const lock = await lockBalance();
    const inHand = credit('2.50');
    await waitForLockWaiters(stack.env.DATABASE_URL!);

    replica.child.kill('SIGTERM');
    await eventually(async () => expect((await fetch(`${replica.healthUrl}/readyz`)).status).toBe(503), 5000, 20);
    expect((await fetch(`${replica.healthUrl}/livez`)).status).toBe(200);
    // The gateway's readiness no longer counts on it, and a new request is not routed to it.
    await eventually(async () => expect((await stack.inject({ method: 'GET', url: '/readyz' })).json().checks.wallet).toBe(false), 5000, 20);
    expectError(await credit('1.00'), 503, 'service_unavailable');
    expect(replica.child.exitCode).toBeNull();

    await lock.release();
    const res = await inHand;
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ data: { balance: { amount: '1502.50' } } });
    expect(await replica.exited).toEqual({ code: 0, signal: null });
    expect(logEntries(replica.output(), /^wallet service stopped$/)).toMatchObject([{ handlersFinished: 1 }]);
  });

  it('the gateway stops accepting connections, answers the request in flight, then exits 0', async () => {
    await stack.startService('wallet');
    const gateway = await startReplica('gateway', stack.env, 'gateway#1');
    replicas.push(gateway);
    await gateway.waitReady();
    const before = Number((await wallet(stack, player)).coins!.balance);
    const lock = await lockBalance();
    const inFlight = fetch(`${gateway.healthUrl}/api/v1/currencies/${coins}/credit`, {
      method: 'POST',
      headers: creditHeaders(),
      body: JSON.stringify({ amount: '0.50' }),
    });
    await waitForLockWaiters(stack.env.DATABASE_URL!);

    gateway.child.kill('SIGTERM');
    await eventually(async () => expect(await refused(gateway.port)).toBe(true), 5000, 20);
    expect(gateway.child.exitCode).toBeNull();

    await lock.release();
    const res = await inFlight;
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ data: { balance: { amount: (before + 0.5).toFixed(2) } } });
    const gwExit = await gateway.exited;
    expect(gwExit).toEqual({ code: 0, signal: null });
    expect(gateway.output()).toMatch(/gateway stopped/);
  });
});
