/**
 * The shape of every fault scenario: players with coins and chests, a mixed burst (burst.ts), the
 * fault in the middle of it, recovery measured from the fault's end while the burst goes on, then
 * the burst stopped, the stack settled and the ground truth checked.
 */
import os from 'node:os';
import { Burst } from './burst.js';
import { email, newActors, unexpectedUnderFault, type ChaosContext, type ScenarioReport } from './context.js';
import { sleep } from './infra.js';
import { Outcomes } from './outcomes.js';
import { measureRecovery, settle } from './recovery.js';
import { checkTruth, parkedSince } from './truth.js';

/** What injecting a fault tells the runner. */
export interface Injected {
  /** When the fault began (ms): the kill, the restart's start. */
  began: number;
  /**
   * When the fault ended (ms): the faulty part is back: the killed service's new process ready,
   * nats-server answering JetStream requests, Postgres accepting connections.
   */
  end: number;
  notes: string[];
}

/** A bound on waiting for recovery; past it the scenario reports "no recovery". */
const RECOVERY_BOUND_MS = 30_000;
const AFTER_RECOVERY_MS = 3000;
/** How long one operation is retried before its outcome counts as unknown. */
const RETRY_MS = 40_000;

export async function runUnderFault(ctx: ChaosContext, inject: () => Promise<Injected>): Promise<ScenarioReport> {
  const size = ctx.short ? { players: 3, chests: 12, registrars: 1, warmMs: 1000 } : { players: 6, chests: 20, registrars: 2, warmMs: 1500 };
  const players = await newActors(ctx, 'fault', size.players, size.chests);
  const o = new Outcomes();
  ctx.api.take();
  const since = new Date();
  const burst = new Burst(ctx.api, o, ctx.woodenId, {
    players,
    registrars: size.registrars,
    pauseMs: 100,
    purchasesEach: 60,
    retryMs: RETRY_MS,
    email,
  }).start();
  await sleep(size.warmMs);
  const before = burst.finished;
  const load = os.loadavg()[0]!.toFixed(1);
  const injected = await inject();
  ctx.log(`fault over after ${before} operations; measuring recovery while the burst goes on ...`);
  const recovery = await measureRecovery(ctx.api, ctx.prober, ctx.db, injected.end, RECOVERY_BOUND_MS);
  const recoveredAt = Date.now();
  const doneAtRecovery = burst.finished;
  // The burst goes on a while, to see it flowing again after the recovery.
  await sleep(AFTER_RECOVERY_MS);
  const doneAfter = burst.finished - doneAtRecovery;
  await burst.stop();
  o.answers = ctx.api.take();
  const unsettled = await settle(ctx.db, ctx.nats.url, ctx.prefix, o.playerIds(), 30_000, ctx.progress);
  const verdict = await checkTruth(ctx.db, o);
  const parked = await parkedSince(ctx.db, since);

  const notes = [...injected.notes];
  notes.push(
    recovery.recoveryS === undefined
      ? `no recovery within ${RECOVERY_BOUND_MS / 1000} s: waiting for ${recovery.waitingFor}`
      : `probe 200 after ${recovery.probeS} s, grants pending at the fault's end landed after ${recovery.grantsS} s`,
  );
  notes.push(
    `${before} operations before the fault, ${o.attempted} in all (${o.answers.length} requests); machine load ${load} on ${os.cpus().length} cores at the fault`,
  );
  const late = o.answers.filter((a) => a.sentAt > recoveredAt && (a.status <= 0 || a.status >= 500));
  notes.push(
    `${doneAfter} operations finished in the ${AFTER_RECOVERY_MS / 1000} s after the recovery${late.length ? `; ${late.length} requests sent after it answered 5xx or failed (${[...new Set(late.map((a) => `${a.kind} ${a.status} ${a.code ?? ''}`.trim()))].join(', ')})` : ', none 5xx'}`,
  );
  const unanswered = [...o.opens, ...o.credits, ...o.purchases, ...o.registrations].filter((x) => x.outcome === 'unknown').length;
  if (unanswered)
    notes.push(`${unanswered} operations still unanswered after ${RETRY_MS / 1000} s of retries: each checked whole or absent in the database`);
  const fiveXX = o.fiveXX();
  return {
    attempted: o.attempted,
    lost: verdict.lost + parked.length,
    duplicated: verdict.duplicated,
    unknown: verdict.unknown,
    fiveXX,
    unexpected5xx: unexpectedUnderFault(fiveXX),
    downS: Math.round((injected.end - injected.began) / 100) / 10,
    recoveryS: recovery.recoveryS ?? null,
    unsettled,
    notes,
    problems: [...parked, ...verdict.problems],
  };
}
