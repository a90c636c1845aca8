/**
 * Credit and purchase races, all at once:
 * - funds: a player with coins for exactly K wooden chests sends K + 5 purchases at once: exactly
 *   K are bought, the others get 409 insufficient_funds, the balance ends at 0;
 * - capacity: a player with room for exactly R more chests sends R + 6 purchases at once: exactly
 *   R are bought, the others 409 inventory_full, and are not charged;
 * - credits: players send credits where each Idempotency-Key goes three times at once (one
 *   credit; every answer 200 with it), a key reused with another amount (409, not applied), while
 *   they buy chests at the same time, each purchase's key sent twice at once (one purchase; both
 *   answered 201 with it, the second after retrying 409 idempotency_key_in_use).
 */
import { randomUUID } from 'node:crypto';
import { balanceAmount, type Actor, type Answer } from '../support/client.js';
import { newActors, type ChaosContext, type Scenario } from '../support/context.js';
import { Outcomes, outcomeOf, purchaseOpOf } from '../support/outcomes.js';
import { settle } from '../support/recovery.js';
import { checkTruth } from '../support/truth.js';

const PRICE = 500;
const CAPACITY = 100;

type Size = { affordable: number; room: number; creditors: number; keys: number };
type Sent = Pick<Answer, 'status' | 'code'>;

/** The scenario's requests: each recorded in `o`, each anomaly of an answer noted in `wrong`. */
class Racer {
  constructor(
    private readonly ctx: ChaosContext,
    private readonly o: Outcomes,
    private readonly wrong: string[],
  ) {}

  /** Sends again (up to 2 s) while the key's first request is under way: 409 idempotency_key_in_use. */
  private async whileInUse(send: () => Promise<Answer>): Promise<Answer> {
    let a = await send();
    for (let i = 0; i < 40 && a.code === 'idempotency_key_in_use'; i++) {
      await new Promise((r) => setTimeout(r, 50));
      a = await send();
    }
    return a;
  }

  async buy(p: Actor, key?: string): Promise<Answer> {
    const a = await this.whileInUse(() => this.ctx.api.purchase(p, this.ctx.woodenId, 1, key));
    this.o.purchases.push(purchaseOpOf(p.id, a, []));
    return a;
  }

  async credit(p: Actor, key: string, amount: string): Promise<Answer> {
    const a = await this.whileInUse(() => this.ctx.api.credit(p, amount, key));
    this.o.credits.push({ playerId: p.id, key, amount, outcome: outcomeOf(a) });
    return a;
  }

  /** One creditor's races: keys sent three times at once, a key reused with another amount, purchase keys sent twice at once. */
  creditorRaces(p: Actor, keys: number): Promise<{ as: Answer[] }>[] {
    return [
      ...Array.from({ length: keys }, () => {
        const key = randomUUID();
        const amount = `${1 + Math.floor(Math.random() * 99)}.25`;
        return Promise.all([this.credit(p, key, amount), this.credit(p, key, amount), this.credit(p, key, amount)]).then((as) => ({ as }));
      }),
      (async () => {
        const key = randomUUID();
        const first = await this.credit(p, key, '10.00');
        const other = await this.ctx.api.credit(p, '11.00', key);
        if (!(other.status === 409 && other.code === 'idempotency_key_reused'))
          this.wrong.push(`a key reused with another amount answered ${other.status} ${other.code ?? ''}`);
        return { as: [first] };
      })(),
      ...Array.from({ length: 3 }, async () => {
        const key = randomUUID();
        const as = await Promise.all([this.buy(p, key), this.buy(p, key)]);
        if (as.some((a) => a.status !== 201) || as[0]!.body?.meta?.purchase_id !== as[1]!.body?.meta?.purchase_id) {
          this.wrong.push(
            `one purchase key sent twice at once answered ${as.map((a) => `${a.status} ${a.code ?? a.body?.meta?.purchase_id}`).join(' and ')}`,
          );
        }
        return { as };
      }),
    ];
  }
}

/** What the races' answers should have been: exactly the affordable and the room, one balance per key. */
function judgeAnswers(size: Size, funds: Sent[], full: Sent[], credits: { as: Answer[] }[], wrong: string[]): void {
  const count = (as: Sent[], status: number, code?: string) => as.filter((a) => a.status === status && (!code || a.code === code)).length;
  if (count(funds, 201) !== size.affordable || count(funds, 409, 'insufficient_funds') !== 5) {
    wrong.push(
      `funds race: ${count(funds, 201)} bought and ${count(funds, 409, 'insufficient_funds')} insufficient_funds, expected ${size.affordable} and 5`,
    );
  }
  if (count(full, 201) !== size.room || count(full, 409, 'inventory_full') !== 6) {
    wrong.push(`capacity race: ${count(full, 201)} bought and ${count(full, 409, 'inventory_full')} inventory_full, expected ${size.room} and 6`);
  }
  for (const { as } of credits) {
    const balances = new Set(as.filter((a) => a.kind === 'credit' && a.status === 200).map((a) => balanceAmount(a)));
    const bad = as.filter((a) => a.status !== 200 && !(a.kind === 'purchase' && a.status === 201));
    if (bad.length) wrong.push(`credit race: answered ${bad.map((a) => `${a.status} ${a.code ?? ''}`).join(', ')}`);
    if (balances.size > 1) wrong.push(`one key answered ${balances.size} different balances: ${[...balances].join(', ')}`);
  }
}

export const creditPurchaseRace: Scenario = {
  name: 'credit and purchase races',
  short: true,
  async run(ctx) {
    const size: Size = ctx.short ? { affordable: 5, room: 3, creditors: 2, keys: 8 } : { affordable: 8, room: 4, creditors: 3, keys: 15 };
    const o = new Outcomes();
    const wrong: string[] = [];
    // Registration gives 1500 coins; the funds player gets what makes exactly `affordable` chests.
    const [funds] = await newActors(ctx, 'funds', 1, 0, size.affordable * PRICE - 1500);
    // The starter chest and the bought ones leave room for exactly `room` more.
    const [full] = await newActors(ctx, 'capacity', 1, CAPACITY - 1 - size.room);
    const creditors = await newActors(ctx, 'credits', size.creditors, 0);
    o.players.push(funds!, full!, ...creditors);
    ctx.api.take();

    const racer = new Racer(ctx, o, wrong);
    const [fundsAnswers, fullAnswers, creditAnswers] = await Promise.all([
      Promise.all(Array.from({ length: size.affordable + 5 }, () => racer.buy(funds!))),
      Promise.all(Array.from({ length: size.room + 6 }, () => racer.buy(full!))),
      Promise.all(creditors.flatMap((p) => racer.creditorRaces(p, size.keys))),
    ]);
    judgeAnswers(size, fundsAnswers, fullAnswers, creditAnswers, wrong);
    o.answers = ctx.api.take();
    const unsettled = await settle(ctx.db, ctx.nats.url, ctx.prefix, o.playerIds(), 30_000, ctx.progress);
    const verdict = await checkTruth(ctx.db, o);
    const bal = await ctx.db.query<{ amount: string }>(
      `SELECT b.amount::text AS amount FROM wallet.balances b JOIN wallet.currencies c ON c.id = b.currency_id WHERE b.player_id = $1 AND c.code = 'coins'`,
      [funds!.id],
    );
    if (Number(bal.rows[0]?.amount) !== 0) wrong.push(`funds race: the balance ends at ${bal.rows[0]?.amount}, expected 0`);
    const fiveXX = o.fiveXX();
    return {
      attempted: o.attempted,
      lost: verdict.lost,
      duplicated: verdict.duplicated,
      unknown: verdict.unknown,
      fiveXX,
      unexpected5xx: Object.values(fiveXX).reduce((a, b) => a + b, 0),
      wrongAnswers: wrong.length,
      unsettled,
      notes: [
        `funds: ${size.affordable + 5} purchases at once for ${size.affordable} chests' worth; capacity: ${size.room + 6} at once for ${size.room} free slots; credits: ${size.creditors} players × ${size.keys} keys sent 3 times at once, with 3 purchase keys each sent twice at once`,
      ],
      problems: [...verdict.problems, ...wrong.slice(0, 8)],
    };
  },
};
