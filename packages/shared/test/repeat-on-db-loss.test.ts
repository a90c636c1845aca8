import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { AppError, defineQuery, defineSubject } from '../src/index.js';
import { repeatOnDatabaseLoss } from '../src/runtime/repeat-on-db-loss.js';

// A service handles a request again after losing its database only when that cannot apply it
// twice. The handler here fails as pg does when Postgres restarts (ECONNREFUSED, then a
// terminated connection), which the shared error mapping calls database_unavailable.

const Read = defineQuery('test.v1.db_read', z.object({}), z.object({}), { callers: ['gateway'] });
const Keyed = defineSubject('test.v1.db_write', z.object({ idempotencyKey: z.string().optional() }), z.object({}), {
  callers: ['gateway'],
  keyedRetry: true,
});
const Plain = defineSubject('test.v1.db_plain', z.object({}), z.object({}), { callers: ['gateway'] });

/** A handler that fails like a lost database `fails` times, then answers. */
function flaky(fails: number) {
  let calls = 0;
  const lost = [
    Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }),
    new Error('Connection terminated unexpectedly'),
  ];
  return {
    get calls() {
      return calls;
    },
    handle: async () => {
      calls++;
      if (calls <= fails) throw lost[calls % 2];
      return { ok: true };
    },
  };
}

describe('repeatOnDatabaseLoss', () => {
  it('handles a read again until the database is back', async () => {
    const h = flaky(3);
    expect(await repeatOnDatabaseLoss(Read, {}, h.handle)).toEqual({ ok: true });
    expect(h.calls).toBe(4);
  });

  it('handles a keyed write again, but never one without its key (a lost COMMIT may have applied it)', async () => {
    const keyed = flaky(2);
    expect(await repeatOnDatabaseLoss(Keyed, { idempotencyKey: 'k' }, keyed.handle)).toEqual({ ok: true });
    expect(keyed.calls).toBe(3);
    const unkeyed = flaky(1);
    await expect(repeatOnDatabaseLoss(Keyed, {}, unkeyed.handle)).rejects.toThrow(/ECONNREFUSED|terminated/);
    expect(unkeyed.calls).toBe(1);
    const plain = flaky(1);
    await expect(repeatOnDatabaseLoss(Plain, { idempotencyKey: 'k' }, plain.handle)).rejects.toThrow();
    expect(plain.calls).toBe(1);
  });

  it('gives up when the window ends, and never repeats a refusal', async () => {
    const down = flaky(1_000);
    await expect(repeatOnDatabaseLoss(Read, {}, down.handle, { windowMs: 300 })).rejects.toThrow();
    expect(down.calls).toBeGreaterThan(1);
    expect(down.calls).toBeLessThan(10);
    let refused = 0;
    await expect(
      repeatOnDatabaseLoss(Read, {}, async () => {
        refused++;
        throw AppError.conflict('insufficient_funds', 'too low');
      }),
    ).rejects.toMatchObject({ code: 'insufficient_funds' });
    expect(refused).toBe(1);
  });
});
