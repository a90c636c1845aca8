import { randomBytes, randomUUID } from 'node:crypto';
import { connect, headers as natsHeaders, type NatsConnection, type Service } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { AppError, Bus, contextFromHeaders, createLogger, defineSubject, endpoint, ServiceMetrics, type CallContext } from '../src/index.js';
import { addEndpoint } from '../src/runtime/add-endpoint.js';
import { answerBy, ANSWER_ROOM_MS, ATTEMPT_ROOM_MS, attemptFits, nestedBound } from '../src/runtime/deadline.js';
import { repeatOnDatabaseLoss } from '../src/runtime/repeat-on-db-loss.js';
import { testInfra } from '../src/testing/index.js';

// Nested repeats fit the outermost caller's bound (deadline.ts): the time a caller waits travels
// with each call, and every level answers within what is left of it.

describe('the deadline budget', () => {
  const now = 1_000_000;

  it('reads a call budget as a deadline on this clock; no budget, no deadline', () => {
    const h = natsHeaders();
    h.set('ccs-request-id', 'r');
    expect(contextFromHeaders(h, now).deadline).toBeUndefined();
    h.set('ccs-budget-ms', '5000');
    expect(contextFromHeaders(h, now).deadline).toBe(now + 5000);
    for (const bad of ['', 'x', '-1']) {
      const b = natsHeaders();
      b.set('ccs-budget-ms', bad);
      expect(contextFromHeaders(b, now).deadline, bad).toBeUndefined();
    }
  });

  it('leaves a call without a deadline its own bounds', () => {
    expect(answerBy({})).toBeUndefined();
    expect(nestedBound({}, 5000, now)).toBe(5000);
    expect(attemptFits(undefined, 400, 60_000, now)).toBe(true);
  });

  it('cuts a nested call to what is left, keeping room for the answer', () => {
    const ctx = { deadline: now + 5000 };
    expect(answerBy(ctx)).toBe(now + 5000 - ANSWER_ROOM_MS);
    expect(nestedBound(ctx, 5000, now)).toBe(5000 - ANSWER_ROOM_MS);
    expect(nestedBound(ctx, 2000, now)).toBe(2000);
    expect(nestedBound(ctx, 5000, now + 4000)).toBe(1000 - ANSWER_ROOM_MS);
    expect(nestedBound(ctx, 5000, now + 6000)).toBe(0);
  });

  it('starts another attempt only when one as long as the last (at least ATTEMPT_ROOM_MS) still ends in time', () => {
    const by = now + 3000;
    expect(attemptFits(by, 100, 10, now)).toBe(true);
    expect(attemptFits(by, 100, 10, now + 3000 - 100 - ATTEMPT_ROOM_MS)).toBe(true);
    expect(attemptFits(by, 100, 10, now + 3000 - 100 - ATTEMPT_ROOM_MS + 1)).toBe(false);
    // The last attempt waited 2.5 s (a pooler's queue): another would end past `by`.
    expect(attemptFits(by, 100, 2500, now + 500)).toBe(false);
  });

  it('repeatOnDatabaseLoss: within the deadline as far as it fits, not at all when one more attempt does not', async () => {
    let calls = 0;
    const lost = async () => {
      calls++;
      if (calls <= 2) throw AppError.databaseUnavailable(new Error('Connection terminated unexpectedly'));
      return { ok: true };
    };
    expect(await repeatOnDatabaseLoss(Outer, { idempotencyKey: 'k' }, lost, { answerBy: Date.now() + 60_000 })).toEqual({ ok: true });
    expect(calls).toBe(3);
    calls = 0;
    await expect(repeatOnDatabaseLoss(Outer, { idempotencyKey: 'k' }, lost, { answerBy: Date.now() + ATTEMPT_ROOM_MS / 2 })).rejects.toMatchObject({
      code: 'database_unavailable',
    });
    expect(calls).toBe(1);
  });
});

/** A keyed write, as purchases and credits declare. */
const Outer = defineSubject('test.v1.deadline_outer', z.object({ idempotencyKey: z.string() }), z.object({ ok: z.boolean() }), {
  callers: ['gateway'],
  keyedRetry: true,
});
const Inner = defineSubject('test.v1.deadline_inner', z.object({ idempotencyKey: z.string() }), z.object({ ok: z.boolean() }), {
  callers: ['gateway'],
  keyedRetry: true,
});

describe('nested repeats after a lost database, against a real NATS server', () => {
  let nc: NatsConnection;
  let service: Service;
  let gateway: Bus;
  const prefix = `t${randomBytes(4).toString('hex')}`;
  /** The deadline each inner handling saw, and the budget it was sent with. */
  const innerDeadlines: (number | undefined)[] = [];
  let innerHandlings = 0;
  const metrics = new ServiceMetrics('test');
  /** How often a handling of the inner subject was repeated after a lost database. */
  const innerRepeats = async () =>
    (await metrics.registry.getSingleMetric('ccs_nats_handler_repeats_total')?.get())?.values.find((v) => v.labels.subject === Inner.subject)
      ?.value ?? 0;

  beforeAll(async () => {
    nc = await connect({ servers: (await testInfra()).natsUrl });
    // The gateway's write bound: 5 s.
    gateway = new Bus(nc, prefix, 5000);
    const inside = new Bus(nc, prefix, 5000);
    service = await nc.services.add({ name: `deadline_${prefix}`, version: '1.0.0', queue: 'q' });
    const registration = {
      // set below
      service: 'test',
      prefix,
      log: createLogger('test', 'silent'),
      metrics,
      inFlight: new Set<Promise<unknown>>(),
      traced: false,
    };
    // The inner service's database is gone: every handling fails as a lost connection does.
    addEndpoint(
      service,
      endpoint(Inner, async (_req, ctx) => {
        innerHandlings++;
        innerDeadlines.push(ctx.deadline);
        throw AppError.databaseUnavailable(new Error('connect ECONNREFUSED'));
      }),
      registration,
    );
    // The outer service loses its own database for its first 2.5 s (fast failures), then reaches
    // the inner service: as chests' purchase does when its database comes back before the wallet's.
    let firstAt: number | undefined;
    addEndpoint(
      service,
      endpoint(Outer, async (req, ctx: CallContext) => {
        firstAt ??= Date.now();
        if (Date.now() - firstAt < 2500) throw AppError.databaseUnavailable(new Error('Connection terminated unexpectedly'));
        return inside.request(Inner, { idempotencyKey: req.idempotencyKey }, ctx);
      }),
      registration,
    );
    await nc.flush();
  });
  afterAll(async () => {
    await service?.stop();
    await nc?.close();
  });

  it('answers 503 database_unavailable within the outermost bound, never a 504, and the inner service repeats only within what is left', async () => {
    const failure = await gateway.request(Outer, { idempotencyKey: randomUUID() }, { requestId: randomUUID() }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(failure).toBeInstanceOf(AppError);
    expect((failure as AppError).errors[0]).toMatchObject({ kind: 'unavailable', code: 'database_unavailable' });
    // Every inner handling knew its deadline, and was handled once: too little was left to repeat it.
    expect(innerHandlings).toBeGreaterThan(0);
    expect(innerDeadlines.every((d) => d !== undefined)).toBe(true);
    expect(await innerRepeats()).toBe(0);
  });
});
