/**
 * A mixed burst, as many clients would send it, until stopped: per player one worker opening its
 * chests (POST and GET alternately, and the chests it buys), one crediting coins and one buying
 * wooden chests; and workers registering new players. Every operation carries an Idempotency-Key
 * and is retried with it on a 5xx, a broken connection, a timeout or a 409 idempotency_key_in_use
 * (the first attempt still under way), until answered (bounded; past that its outcome is unknown
 * to the client, and the ground truth holds it to "applied whole once, or not at all").
 */
import { randomUUID } from 'node:crypto';
import { dataId, dataIds, type Actor, type Api } from './client.js';
import { sleep } from './infra.js';
import { outcomeOf, purchaseOpOf, type Outcomes } from './outcomes.js';

export interface BurstPlan {
  /** Players that open, credit and buy. */
  players: Actor[];
  /** Concurrent registration workers (0 for none). */
  registrars: number;
  /** Pause of each worker between two operations. */
  pauseMs: number;
  /** Purchases per player at most (inventory capacity). */
  purchasesEach: number;
  /** How long one operation keeps retrying before its outcome counts as unknown. */
  retryMs: number;
  email(kind: string): string;
}

export class Burst {
  private stopped = false;
  private loops: Promise<void>[] = [];
  private done = 0;

  constructor(
    private readonly api: Api,
    private readonly o: Outcomes,
    private readonly woodenId: string,
    private readonly plan: BurstPlan,
  ) {}

  /** Operations finished so far. */
  get finished(): number {
    return this.done;
  }

  start(): this {
    for (const p of this.plan.players) {
      if (!this.o.players.includes(p)) this.o.players.push(p);
      this.loops.push(
        this.loop(() => this.openOne(p)),
        this.loop(() => this.creditOne(p)),
        this.loop(this.buyer(p)),
      );
    }
    for (let i = 0; i < this.plan.registrars; i++) this.loops.push(this.loop(() => this.registerOne()));
    return this;
  }

  /** Stops starting operations and waits for those in hand (and their retries). */
  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all(this.loops);
  }

  /** Runs a worker's steps: each does one operation, or waits ('idle'), or has no more work ('end'). */
  private async loop(step: () => Promise<'op' | 'idle' | 'end'>): Promise<void> {
    while (!this.stopped) {
      const r = await step();
      if (r === 'end') return;
      if (r === 'op') this.done++;
      await sleep(r === 'idle' ? 100 : this.plan.pauseMs * (0.5 + Math.random()));
    }
  }

  private deadline = () => Date.now() + this.plan.retryMs;

  /** Opens the player's next chest (the buyer adds the chests it buys); idle while it has none. */
  private async openOne(p: Actor): Promise<'op' | 'idle'> {
    const chestId = p.chests.shift();
    if (!chestId) return 'idle';
    const key = randomUUID();
    const method = Math.random() < 0.5 ? 'GET' : 'POST';
    const a = await this.api.untilAnswered(() => this.api.open(p, chestId, key, method), this.deadline());
    this.o.opens.push({
      playerId: p.id,
      chestId,
      outcome: outcomeOf(a),
      status: a.status,
      code: a.code,
      openingId: a.status === 200 ? a.body?.meta?.opening_id : undefined,
    });
    return 'op';
  }

  private async creditOne(p: Actor): Promise<'op'> {
    const key = randomUUID();
    const amount = `${1 + Math.floor(Math.random() * 50)}.${String(Math.floor(Math.random() * 100)).padStart(2, '0')}`;
    const a = await this.api.untilAnswered(() => this.api.credit(p, amount, key), this.deadline());
    this.o.credits.push({ playerId: p.id, key, amount, outcome: outcomeOf(a) });
    return 'op';
  }

  private buyer(p: Actor): () => Promise<'op' | 'end'> {
    let bought = 0;
    return async () => {
      if (bought >= this.plan.purchasesEach) return 'end';
      bought++;
      const key = randomUUID();
      const a = await this.api.untilAnswered(() => this.api.purchase(p, this.woodenId, 1, key), this.deadline());
      const chestIds: string[] = a.status === 201 ? dataIds(a) : [];
      this.o.purchases.push(purchaseOpOf(p.id, a, chestIds));
      p.chests.push(...chestIds);
      return 'op';
    };
  }

  private async registerOne(): Promise<'op'> {
    const email = this.plan.email('burst');
    const key = randomUUID();
    const a = await this.api.untilAnswered(() => this.api.register(email, key), this.deadline());
    this.o.registrations.push({
      email,
      key,
      outcome: outcomeOf(a),
      status: a.status,
      code: a.code,
      playerId: a.status === 201 ? dataId(a) : undefined,
    });
    return 'op';
  }
}
