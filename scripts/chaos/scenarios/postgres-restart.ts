/**
 * The stack's Postgres (a private initdb cluster on its own port) crashed mid-burst:
 * `pg_ctl restart -m immediate` (no checkpoint, crash recovery on start), and in the full suite
 * also `pg_ctl stop -m immediate`, 6 s down, then started again. The fault ends when the server
 * accepts connections again.
 */
import type { Scenario } from '../support/context.js';
import { runUnderFault } from '../support/fault-run.js';
import { sleep } from '../support/infra.js';

const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

export const postgresRestart: Scenario = {
  name: 'Postgres restart',
  short: true,
  run: (ctx) =>
    runUnderFault(ctx, async () => {
      const began = Date.now();
      await ctx.postgres.restart('immediate');
      const end = Date.now();
      ctx.log(`Postgres restarted (immediate) in ${s(end - began)}`);
      return { began, end, notes: [`pg_ctl restart -m immediate mid-burst; accepting connections again after ${s(end - began)}`] };
    }),
};

const DOWN_MS = 6000;

export const postgresDownLong: Scenario = {
  name: `Postgres down ${DOWN_MS / 1000} s`,
  short: false,
  run: (ctx) =>
    runUnderFault(ctx, async () => {
      const began = Date.now();
      await ctx.postgres.stop('immediate');
      await sleep(DOWN_MS);
      await ctx.postgres.start();
      const end = Date.now();
      ctx.log(`Postgres stopped (immediate) and back after ${s(end - began)}`);
      return {
        began,
        end,
        notes: [`pg_ctl stop -m immediate mid-burst, started again ${DOWN_MS / 1000} s later; accepting connections after ${s(end - began)}`],
      };
    }),
};
