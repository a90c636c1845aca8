/** What every scenario gets, and what it reports. */
import { randomBytes } from 'node:crypto';
import type pg from 'pg';
import type { PrivatePostgres } from '@ccs/shared/testing';
import { inParallel, type Actor, type Api } from './client.js';
import type { PrivateNats } from './infra.js';
import type { Progress } from './progress.js';
import type { ChaosStack } from './stack.js';

export interface ChaosContext {
  api: Api;
  /** The stack's database (on the private cluster), for the ground truth. */
  db: pg.Pool;
  stack: ChaosStack;
  nats: PrivateNats;
  postgres: PrivatePostgres;
  prefix: string;
  short: boolean;
  /** The catalog id of the Wooden Chest (500 coins). */
  woodenId: string;
  /** A player of its own for the recovery probe. */
  prober: Actor;
  /** The run's watchdog: what happens counts as progress (progress.ts). */
  progress: Progress;
  log(line: string): void;
}

/** One scenario's line of the summary. */
export interface ScenarioReport {
  /** Operations attempted (a retried one counts once). */
  attempted: number;
  lost: number;
  duplicated: number;
  /** The client never learnt the outcome; the database holds it whole or not at all. */
  unknown: number;
  /** 5xx answers (and failed connections, 0, and client timeouts, -1) by status and code. */
  fiveXX: Record<string, number>;
  /** The 5xx this scenario does not allow (a 500, or any 5xx where no fault was injected). */
  unexpected5xx: number;
  /** Answers that contradict what the database holds (e.g. a refused purchase there was money for). */
  wrongAnswers?: number;
  /** Seconds the faulty part was away (kill → new process ready; server down → back); undefined without a fault. */
  downS?: number;
  /**
   * Seconds from the fault's end (the part back) until a probe answered 200 everywhere and every
   * grant pending then had landed; undefined without a fault, null when not within the bound.
   */
  recoveryS?: number | null;
  /** What was still pending when settling gave up ("" = settled). */
  unsettled: string;
  notes: string[];
  problems: string[];
}

export interface Scenario {
  name: string;
  /** Part of the short (CI) suite. */
  short: boolean;
  run(ctx: ChaosContext): Promise<ScenarioReport>;
}

let emails = 0;
const run = randomBytes(3).toString('hex');
/** A unique email of this run. */
export const email = (kind: string) => `chaos-${run}-${kind}-${++emails}@example.com`;

/** Registers `n` players, each with `coins` coins credited and `chests` wooden chests bought. */
export async function newActors(ctx: ChaosContext, kind: string, n: number, chests: number, coins = 1_000_000): Promise<Actor[]> {
  const actors: Actor[] = new Array(n);
  await inParallel(4, Array.from({ length: n }), async (_, i) => {
    const a = await ctx.api.newActor(email(kind));
    await ctx.api.provision(a, ctx.woodenId, coins, chests);
    actors[i] = a;
  });
  return actors;
}

/** The 5xx a fault makes normal: 503 (not running, database unavailable, purchase interrupted, overloaded), 504, broken connections and client timeouts; never a 500. */
export function unexpectedUnderFault(fiveXX: Record<string, number>): number {
  return Object.entries(fiveXX)
    .filter(([k]) => !/^(503|504|0|-1)\b/.test(k))
    .reduce((n, [, c]) => n + c, 0);
}
