/**
 * Same-chest races: every chest opened by seven requests at once: two with one Idempotency-Key,
 * two with a key each, two without a key (GET and POST mixed) and one by another player. Exactly
 * one opening may consume the chest; the requests with its key get its result (200, replayed),
 * every other request of the owner 403 chest_already_opened, the other player 403; nothing 5xx.
 */
import { randomUUID } from 'node:crypto';
import type { Actor } from '../support/client.js';
import { newActors, type ChaosContext, type Scenario } from '../support/context.js';
import { Outcomes, outcomeOf } from '../support/outcomes.js';
import { settle } from '../support/recovery.js';
import { checkTruth } from '../support/truth.js';

interface Shot {
  by: Actor;
  key?: string;
  status: number;
  code?: string;
  openingId?: string;
}

type Target = { owner: Actor; other: Actor; chestId: string };

/** The seven requests at one chest, at once; the owner's are recorded as openings. */
async function fireAt(ctx: ChaosContext, o: Outcomes, { owner, other, chestId }: Target): Promise<Shot[]> {
  const shared = randomUUID();
  const plan: { by: Actor; key?: string }[] = [
    { by: owner, key: shared },
    { by: owner, key: shared },
    { by: owner, key: randomUUID() },
    { by: owner, key: randomUUID() },
    { by: owner },
    { by: owner },
    { by: other, key: randomUUID() },
  ];
  return Promise.all(
    plan.map(async (s, n) => {
      const a = await ctx.api.open(s.by, chestId, s.key, n % 2 ? 'GET' : 'POST');
      const openingId = a.status === 200 ? a.body?.meta?.opening_id : undefined;
      if (s.by === owner) o.opens.push({ playerId: owner.id, chestId, outcome: outcomeOf(a), status: a.status, code: a.code, openingId });
      return { ...s, status: a.status, code: a.code, openingId };
    }),
  );
}

/** The answers each chest's requests should have had, given the opening that won. */
async function judge(ctx: ChaosContext, chests: Target[], shots: Map<string, Shot[]>): Promise<{ wrong: string[]; keyless200: number }> {
  const won = await ctx.db.query<{ chest_id: string; id: string; key: string | null }>(
    `SELECT o.chest_id, o.id, k.idempotency_key AS key
       FROM chests.openings o
       LEFT JOIN chests.opening_keys k ON k.kind = 'one' AND k.app_id = o.app_id AND k.player_id = o.player_id AND k.opening_ids[1] = o.id
      WHERE o.chest_id = ANY($1::uuid[])`,
    [chests.map((c) => c.chestId)],
  );
  const winner = new Map(won.rows.map((r) => [r.chest_id, r]));
  const wrong: string[] = [];
  let keyless200 = 0;
  for (const { owner, chestId } of chests) {
    const w = winner.get(chestId);
    for (const s of shots.get(chestId) ?? []) {
      const say = (why: string) =>
        wrong.push(
          `chest ${chestId}: ${s.by === owner ? (s.key ? 'a keyed' : 'a keyless') : "another player's"} request answered ${s.status} ${s.code ?? ''} (${why})`,
        );
      if (s.by !== owner) {
        if (s.status !== 403) say('expected 403');
      } else if (!w) {
        say('no opening consumed the chest');
      } else if (s.status === 200) {
        if (s.openingId !== w.id) say(`names ${s.openingId}, the chest's opening is ${w.id}`);
        else if (s.key ? s.key !== w.key : (keyless200++, w.key !== null)) say('not the winner, not its key');
      } else if (s.key && s.key === w.key) {
        say("expected the opening's result: same key");
      } else if (!(s.status === 403 && s.code === 'chest_already_opened')) {
        say('expected 403 chest_already_opened');
      }
    }
  }
  return { wrong, keyless200 };
}

export const sameChestRace: Scenario = {
  name: 'same-chest races',
  short: true,
  async run(ctx) {
    const size = ctx.short ? { players: 3, chests: 8, wave: 6 } : { players: 4, chests: 15, wave: 10 };
    const players = await newActors(ctx, 'race', size.players, size.chests);
    const o = new Outcomes();
    o.players.push(...players);
    ctx.api.take();
    const chests = players.flatMap((p, i) => p.chests.map((chestId) => ({ owner: p, other: players[(i + 1) % players.length]!, chestId })));
    const shots = new Map<string, Shot[]>();
    for (let i = 0; i < chests.length; i += size.wave) {
      await Promise.all(chests.slice(i, i + size.wave).map(async (c) => shots.set(c.chestId, await fireAt(ctx, o, c))));
    }
    o.answers = ctx.api.take();
    const unsettled = await settle(ctx.db, ctx.nats.url, ctx.prefix, o.playerIds(), 30_000, ctx.progress);
    const verdict = await checkTruth(ctx.db, o);
    const { wrong, keyless200 } = await judge(ctx, chests, shots);
    const codes: Record<string, number> = {};
    for (const list of shots.values())
      for (const s of list) codes[`${s.status}${s.code ? ` ${s.code}` : ''}`] = (codes[`${s.status}${s.code ? ` ${s.code}` : ''}`] ?? 0) + 1;
    const fiveXX = o.fiveXX();
    return {
      attempted: [...shots.values()].reduce((n, l) => n + l.length, 0),
      lost: verdict.lost,
      duplicated: verdict.duplicated,
      unknown: verdict.unknown,
      fiveXX,
      unexpected5xx: Object.values(fiveXX).reduce((a, b) => a + b, 0),
      wrongAnswers: wrong.length,
      unsettled,
      notes: [
        `${chests.length} chests × 7 requests at once (${size.wave} chests at a time); answers: ${JSON.stringify(codes)}; ${keyless200} keyless winners`,
      ],
      problems: [...verdict.problems, ...wrong.slice(0, 8)],
    };
  },
};
