/**
 * The drill's load (scripts/cluster/drill/): openings, credits and reads run a few at a time, each
 * sent again by the client after a 5xx or a lost answer when it is safe to repeat, and what a
 * client saw of them.
 */
import { randomUUID } from 'node:crypto';
import { sleep } from '../processes.js';
import { ok, type Answer, type DrillClient, type Player } from './client.js';

export type Op = { kind: 'open' | 'credit' | 'read'; player: Player; chest?: string; key: string; path?: string };
/** An operation, every answer it got, and how long until the last (ms). */
export type Done = { op: Op; seen: Answer[]; final: Answer; ms: number };

/** The fixed bursts: players, wooden chests each opens, credits each sends, at once. */
export const BURST = { players: 3, chests: 10, credits: 10, inFlight: 6 };
/** The rolling restart's steady load: players, chests bought beforehand, at once, pause between operations. */
export const ROLLING = { players: 4, chests: 20, inFlight: 3, pauseMs: 60 };

/** A client-visible error that does not count against a scenario: the service's own overload answer. */
export const overload = (a: Answer) => a.status === 503 && a.code === 'overloaded';
export const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

function attempt(client: DrillClient, op: Op): Promise<Answer> {
  const key = op.key || undefined;
  if (op.kind === 'open') return client.send('POST', `/api/v1/chests/${op.chest}/open`, { token: op.player.token, key });
  if (op.kind === 'credit')
    return client.send('POST', `/api/v1/currencies/${client.coins}/credit`, { token: op.player.token, body: { amount: '7' }, json: true, key });
  return client.send('GET', op.path!, { token: op.player.token });
}

/** Runs operations `inFlight` at a time until `take` has none left; `progress.done` counts the answered. */
export async function burst(
  client: DrillClient,
  take: () => Op | undefined,
  o: { inFlight: number; pauseMs?: number; progress: { done: number } },
): Promise<Done[]> {
  const done: Done[] = [];
  await Promise.all(
    Array.from({ length: o.inFlight }, async () => {
      for (let op = take(); op; op = take()) {
        const seen: Answer[] = [];
        const t = Date.now();
        // A write sent without a key is sent once: the client cannot know whether a failed one applied.
        const bound = op.kind === 'open' || op.kind === 'credit' ? (op.key ? 60_000 : 0) : 60_000;
        const final = await client.untilAnswered(() => attempt(client, op!), seen, bound);
        done.push({ op, seen, final, ms: Date.now() - t });
        o.progress.done += 1;
        if (o.pauseMs) await sleep(o.pauseMs);
      }
    }),
  );
  return done;
}

/**
 * Every chest of `players` opened once and `credits` credits each, shuffled; a third of them
 * without an Idempotency-Key (key ''), as a careless client sends: the gateway's own key must
 * keep those from applying twice when the stack repeats them.
 */
export function fixedOps(players: Player[], credits: number): Op[] {
  const ops: Op[] = [];
  const key = (i: number) => (i % 3 === 2 ? '' : randomUUID());
  for (const p of players) {
    p.chests.forEach((chest, i) => ops.push({ kind: 'open', player: p, chest, key: key(i) }));
    for (let i = 0; i < credits; i++) ops.push({ kind: 'credit', player: p, key: key(i) });
  }
  return ops.sort(() => Math.random() - 0.5);
}

/**
 * A steady load until `stop`: an opening every 8th operation (the chests bought beforehand last a
 * whole rolling restart), credits (a quarter of all operations without a key) and reads.
 */
export function rollingLoad(players: Player[]): { take: () => Op | undefined; stop: () => void } {
  const chests = players.flatMap((p) => p.chests.map((chest) => ({ player: p, chest })));
  const reads = ['/api/v1/players/me', '/api/v1/players/me/collection', '/api/v1/currencies', '/api/v1/chests?page[limit]=100'];
  let stopped = false;
  let i = 0;
  const take = (): Op | undefined => {
    if (stopped) return undefined;
    const n = i++;
    const player = players[n % players.length]!;
    if (n % 8 === 0 && chests.length) {
      const c = chests.shift()!;
      return { kind: 'open', player: c.player, chest: c.chest, key: randomUUID() };
    }
    if (n % 2 === 0) return { kind: 'credit', player, key: n % 4 === 0 ? '' : randomUUID() };
    return { kind: 'read', player, key: '', path: reads[(n >> 1) % reads.length] };
  };
  return { take, stop: () => (stopped = true) };
}

/** The client-visible errors of a scenario, by status and code. */
function errorsOf(done: Done[]): Map<string, number> {
  const errors = new Map<string, number>();
  for (const d of done)
    for (const s of d.seen)
      if (!ok(s)) {
        const k = `${s.status} ${s.code ?? ''}`.trim();
        errors.set(k, (errors.get(k) ?? 0) + 1);
      }
  return errors;
}

/** Every answer a client saw that was an error, overload 503s excepted (retries included). */
export const visible = (done: Done[]) => done.flatMap((d) => d.seen).filter((s) => !ok(s) && !overload(s));
export const describeErrors = (done: Done[]) => [...errorsOf(done)].map(([k, n]) => `${k}×${n}`).join(', ') || 'none';
