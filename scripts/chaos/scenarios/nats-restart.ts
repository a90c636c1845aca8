/**
 * The stack's nats-server (a private one, its own port and JetStream store) killed with SIGKILL
 * mid-burst, kept down a moment, then started again on the same port and store. The fault ends
 * when it answers JetStream requests again. The short outage (1 s) is a crash and restart; the
 * long one (6 s, longer than a request's 5 s bound) is in the full suite only.
 */
import type { Scenario } from '../support/context.js';
import { runUnderFault } from '../support/fault-run.js';
import { sleep } from '../support/infra.js';

function natsRestart(downMs: number, short: boolean): Scenario {
  return {
    name: short ? 'NATS restart' : `NATS down ${downMs / 1000} s`,
    short,
    run: (ctx) =>
      runUnderFault(ctx, async () => {
        const began = Date.now();
        await ctx.nats.kill('SIGKILL');
        await sleep(downMs);
        await ctx.nats.start();
        const end = Date.now();
        ctx.log(`nats-server killed and back after ${((end - began) / 1000).toFixed(1)} s`);
        return {
          began,
          end,
          notes: [
            `nats-server killed (SIGKILL) mid-burst, started again after ${downMs / 1000} s on the same port and store; answering JetStream ${((end - began) / 1000).toFixed(1)} s after the kill`,
          ],
        };
      }),
  };
}

export const natsRestartQuick = natsRestart(1000, true);
export const natsDownLong = natsRestart(6000, false);
