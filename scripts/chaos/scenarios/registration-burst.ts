/**
 * A registration burst: many registrations at once, more than players' password queue takes
 * (ARGON2_QUEUE_DEPTH), each with an Idempotency-Key and retried with it after Retry-After on a
 * 503 overloaded (the only 5xx allowed here). Among them, emails registered twice at once with
 * two keys (exactly one player; the other answer 409 email_taken) and requests sent twice at once
 * with one key (one player; both answered 201 with it). Each 201 must have its player with its
 * grants: initial currency, welcome bonus, starter chest.
 */
import { randomUUID } from 'node:crypto';
import { dataId, type Answer } from '../support/client.js';
import { email, type Scenario } from '../support/context.js';
import { Outcomes, outcomeOf } from '../support/outcomes.js';
import { settle } from '../support/recovery.js';
import { checkTruth } from '../support/truth.js';

export const registrationBurst: Scenario = {
  name: 'registration burst',
  short: true,
  async run(ctx) {
    const size = ctx.short ? { single: 70, twoKeys: 5, oneKey: 5 } : { single: 140, twoKeys: 10, oneKey: 10 };
    const o = new Outcomes();
    ctx.api.take();
    const deadline = Date.now() + 40_000;
    const register = async (address: string, key: string): Promise<Answer> => {
      const a = await ctx.api.untilAnswered(() => ctx.api.register(address, key), deadline);
      o.registrations.push({
        email: address,
        key,
        outcome: outcomeOf(a),
        status: a.status,
        code: a.code,
        playerId: a.status === 201 ? dataId(a) : undefined,
      });
      return a;
    };
    const wrong: string[] = [];
    const t = Date.now();
    await Promise.all([
      ...Array.from({ length: size.single }, () => register(email('reg'), randomUUID())),
      ...Array.from({ length: size.twoKeys }, async () => {
        const address = email('reg-twice');
        const as = await Promise.all([register(address, randomUUID()), register(address, randomUUID())]);
        const statuses = as.map((a) => `${a.status}${a.code ? ` ${a.code}` : ''}`).sort();
        if (statuses.join() !== ['201', '409 email_taken'].join())
          wrong.push(`${address} registered twice at once with two keys: ${statuses.join(', ')}`);
      }),
      ...Array.from({ length: size.oneKey }, async () => {
        const address = email('reg-same-key');
        const key = randomUUID();
        const as = await Promise.all([register(address, key), register(address, key)]);
        const ids = new Set(as.map((a) => dataId(a)));
        if (!as.every((a) => a.status === 201) || ids.size !== 1)
          wrong.push(`${address} sent twice at once with one key: ${as.map((a) => `${a.status} ${a.code ?? ''}`).join(', ')}`);
      }),
    ]);
    const seconds = (Date.now() - t) / 1000;
    o.answers = ctx.api.take();
    const unsettled = await settle(ctx.db, ctx.nats.url, ctx.prefix, o.playerIds(), 30_000, ctx.progress);
    const verdict = await checkTruth(ctx.db, o);
    const fiveXX = o.fiveXX();
    const overloaded = fiveXX['503 overloaded'] ?? 0;
    const created = new Set(o.registrations.filter((r) => r.outcome === 'ok').map((r) => r.playerId)).size;
    return {
      attempted: o.attempted,
      lost: verdict.lost,
      duplicated: verdict.duplicated,
      unknown: verdict.unknown,
      fiveXX,
      unexpected5xx: Object.values(fiveXX).reduce((a, b) => a + b, 0) - overloaded,
      wrongAnswers: wrong.length,
      unsettled,
      notes: [
        `${o.attempted} registrations at once (${size.twoKeys} emails twice with two keys, ${size.oneKey} twice with one key): ${created} players in ${seconds.toFixed(1)} s; ${overloaded} answers 503 overloaded, each retried with its key after Retry-After`,
      ],
      problems: [...verdict.problems, ...wrong.slice(0, 8)],
    };
  },
};
