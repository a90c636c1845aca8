/**
 * kill -9 of one service mid-burst, started again at once by the script (as Kubernetes restarts a
 * container): players, wallet, chests, collections, the gateway. The fault ends when the new
 * process is ready (its /readyz answers 200), as a restarted server is "back" once it accepts
 * work; how long that took is the scenario's "down" time, reported beside the recovery.
 */
import type { Scenario } from '../support/context.js';
import { runUnderFault } from '../support/fault-run.js';
import type { Service } from '../support/stack.js';

export function killService(service: Service): Scenario {
  return {
    name: `kill -9 ${service}`,
    short: true,
    run: (ctx) =>
      runUnderFault(ctx, async () => {
        const pid = ctx.stack.pid(service);
        const began = Date.now();
        await ctx.stack.kill(service);
        ctx.stack.start(service);
        const started = Date.now();
        await ctx.stack.waitReady(service, 60_000);
        const end = Date.now();
        const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
        ctx.log(`killed ${service} (pid ${pid}) with SIGKILL; the new process was ready ${s(end - started)} after it started`);
        return {
          began,
          end,
          notes: [
            `${service} (pid ${pid}) killed with SIGKILL mid-burst and started again at once (${ctx.stack.runtime}); the new process was ready ${s(end - started)} after it started`,
          ],
        };
      }),
  };
}
