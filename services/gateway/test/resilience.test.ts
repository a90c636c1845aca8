import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CreateGuest, healthSubject, ListCurrencies, prefixed, ResolveApiKey } from '@ccs/shared';
import type { Subscription } from 'nats';
import { eventually, jsonApiHeaders, startStack, type TestStack } from '../../../test/support/stack.js';
import { registerThroughGateway } from '../../../test/support/register.js';
import { expectError, expectJsonApi } from '../../../test/support/jsonapi-schema.js';

// Reads give up sooner than writes. Which timeout ended a wait is shown by order, not by elapsed
// time: a read or /readyz sent after a write answers while the write still waits. Far apart, so
// that only a stall of seconds between the two requests could reverse the order.
const REQUEST_TIMEOUT_MS = 5000;
const READ_TIMEOUT_MS = 400;
const READY_TIMEOUT_MS = 300;
// A timed-out answer is the 504 service_timeout (or /readyz's false): the timeout's own answer.
// A 503 says that no service took the request (NATS no-responders). A hang fails the test by
// vitest's timeout; no elapsed-time bound decides the outcome.

/** Runs a call and returns its answer with how long it took. */
async function timed<T>(call: () => Promise<T>): Promise<{ res: T; ms: number }> {
  const started = performance.now();
  const res = await call();
  return { res, ms: performance.now() - started };
}

describe('gateway when a backing service is missing or silent', () => {
  let stack: TestStack;
  const silent: Subscription[] = [];

  beforeAll(async () => {
    stack = await startStack({
      env: {
        NATS_REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
        NATS_READ_TIMEOUT_MS: String(READ_TIMEOUT_MS),
        READY_TIMEOUT_MS: String(READY_TIMEOUT_MS),
      },
    });
  });
  afterAll(async () => {
    for (const s of silent) s.unsubscribe();
    await stack?.close();
  });

  /** A subscriber that takes every request on a subject and never answers (`onRequest` hears each). */
  async function blackHole(subject: string, onRequest: () => void = () => undefined): Promise<Subscription> {
    const sub = stack.nc.subscribe(prefixed(stack.env.NATS_PREFIX!, subject), { callback: onRequest });
    silent.push(sub);
    await stack.nc.flush(); // the server has the subscription before any request is sent
    return sub;
  }

  /**
   * A write that players takes and never answers (players must be stopped): sent through the
   * gateway, returned once the black hole has it, so the gateway's request timeout is running.
   */
  async function pendingWrite() {
    let arrived!: () => void;
    const taken = new Promise<void>((r) => (arrived = r));
    const sub = await blackHole(CreateGuest.subject, () => arrived());
    let answered = false;
    const answer = timed(() => stack.inject({ method: 'POST', url: '/api/v1/players/anonymous', headers: { apikey: stack.apiKey } })).finally(
      () => (answered = true),
    );
    await Promise.race([
      taken,
      answer.then(({ res }) => {
        throw new Error(`the write was answered before players took it: ${res.statusCode} ${res.body}`);
      }),
    ]);
    return { sub, answer, answered: () => answered };
  }

  const currencies = () => stack.inject({ method: 'GET', url: '/api/v1/currencies', headers: { apikey: stack.apiKey } });
  const readyz = () => stack.inject({ method: 'GET', url: '/readyz' });

  it('answers 503 at once when the wallet service is stopped, and 200 again once it is back', async () => {
    expect((await currencies()).statusCode).toBe(200);
    await stack.stopService('wallet');
    const [error] = expectError(await currencies(), 503, 'service_unavailable');
    expect(error!.detail).toContain('wallet');

    const ready = await readyz();
    expect(ready.statusCode).toBe(503);
    expect(ready.json()).toEqual({ status: 'not ready', checks: { players: true, wallet: false, chests: true, collections: true, redis: true } });

    await stack.startService('wallet');
    await eventually(async () => expect((await readyz()).statusCode).toBe(200));
    const back = await currencies();
    expect(back.statusCode).toBe(200);
    expectJsonApi(back.json());
  });

  it('answers 504 for a read after the read timeout, and gives a write the longer request timeout', async () => {
    // The demo key resolved while players runs: the tenancy cache knows it once players stops.
    expect((await currencies()).statusCode).toBe(200);
    await stack.stopService('wallet');
    await stack.stopService('players');
    const readSub = await blackHole(ListCurrencies.subject);
    const write = await pendingWrite();
    try {
      const read = await timed(currencies);
      const [error] = expectError(read.res, 504, 'service_timeout');
      expect(error!.detail).toContain('wallet');
      expect(read.ms).toBeGreaterThanOrEqual(READ_TIMEOUT_MS - 50);
      // The write was sent first and still waits: the read's timeout is the shorter one.
      expect(write.answered()).toBe(false);

      const { res, ms } = await write.answer;
      const [writeError] = expectError(res, 504, 'service_timeout');
      expect(writeError!.detail).toContain('players');
      expect(ms).toBeGreaterThanOrEqual(REQUEST_TIMEOUT_MS - 50);
    } finally {
      readSub.unsubscribe();
      write.sub.unsubscribe();
      await stack.startService('wallet');
      await stack.startService('players');
    }
    await eventually(async () => expect((await readyz()).statusCode).toBe(200));
  });

  it('answers /readyz after its own bound, naming a service whose health check hangs', async () => {
    // The demo key resolved while players runs: the tenancy cache knows it once players stops.
    expect((await currencies()).statusCode).toBe(200);
    await stack.stopService('chests');
    await stack.stopService('players');
    const healthSub = await blackHole(healthSubject('chests').subject);
    const write = await pendingWrite();
    try {
      const { res, ms } = await timed(readyz);
      expect(res.statusCode).toBe(503);
      expect(res.json().checks).toMatchObject({ chests: false, players: false, wallet: true });
      expect(ms).toBeGreaterThanOrEqual(READY_TIMEOUT_MS - 50);
      // A write sent before it still waits: /readyz did not wait for the request timeout.
      expect(write.answered()).toBe(false);
      expectError((await write.answer).res, 504, 'service_timeout');
    } finally {
      healthSub.unsubscribe();
      write.sub.unsubscribe();
      await stack.startService('chests');
      await stack.startService('players');
    }
    await eventually(async () => expect((await readyz()).statusCode).toBe(200));
  });

  it('answers 503 for a new apikey while players is down, and keeps serving keys it already knows', async () => {
    await stack.stopService('players');
    try {
      const res = await stack.inject({ method: 'GET', url: '/api/v1/currencies', headers: { apikey: 'never-seen-key-000000000000' } });
      expectError(res, 503, 'service_unavailable');
      // The demo key was resolved before players stopped: the tenancy cache still knows it.
      expect((await currencies()).statusCode).toBe(200);
      const ready = await readyz();
      expect(ready.statusCode).toBe(503);
      expect(ready.json().checks.players).toBe(false);
    } finally {
      await stack.startService('players');
    }
  });

  it('answers 504 for an apikey lookup that never comes back', async () => {
    await stack.stopService('players');
    const sub = await blackHole(ResolveApiKey.subject);
    try {
      const { res, ms } = await timed(() =>
        stack.inject({ method: 'GET', url: '/api/v1/currencies', headers: { apikey: 'another-unseen-key-00000000' } }),
      );
      // The lookup is a read: the read timeout's 504.
      expectError(res, 504, 'service_timeout');
      expect(ms).toBeGreaterThanOrEqual(READ_TIMEOUT_MS - 50);
    } finally {
      sub.unsubscribe();
      await stack.startService('players');
    }
    await eventually(async () => expect((await readyz()).statusCode).toBe(200));
  });

  it('stays ready while the store is stopped: only the store routes answer 503', async () => {
    const player = await registerThroughGateway(stack);
    const purchase = () =>
      stack.inject({
        method: 'POST',
        url: '/api/v1/players/me/store/purchases',
        headers: jsonApiHeaders(stack.apiKey, player.token),
        payload: { data: { type: 'store_purchase', attributes: { platform: 'apple', signed_transaction: 'not.a.jws' } } },
      });
    await stack.stopService('store');
    try {
      const [error] = expectError(await purchase(), 503, 'service_unavailable');
      expect(error!.detail).toContain('store');
      // /readyz does not ask the store: the rest of the API does not depend on it.
      const ready = await readyz();
      expect(ready.statusCode).toBe(200);
      expect(ready.json()).toEqual({ status: 'ready', checks: { players: true, wallet: true, chests: true, collections: true, redis: true } });
      const other = await currencies();
      expect(other.statusCode).toBe(200);
      expectJsonApi(other.json());
    } finally {
      await stack.startService('store');
    }
    // Back: the store answers again (a bad receipt is its 422, not the gateway's 503).
    await eventually(async () => expectError(await purchase(), 422, 'receipt_invalid'));
  });

  it('keeps /healthz answering whatever the services do', async () => {
    await stack.stopService('collections');
    try {
      const res = await stack.inject({ method: 'GET', url: '/healthz' });
      expect(res.statusCode).toBe(200);
    } finally {
      await stack.startService('collections');
    }
  });
});
