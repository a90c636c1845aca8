import { parentPort, workerData } from 'node:worker_threads';
import { buildDropTable, cryptoRandom, fairRandom, OddsSimulation, simulateBanner } from '@ccs/shared/domain';
import type { BannerSimulationJob, SimulationJob } from './job.js';

/**
 * One simulation in a worker thread (./runner.ts starts it): the production roll, pity and banner
 * code on the chest's rules, off chests' event loop. Posts the report and ends.
 */
const job = workerData as SimulationJob | BannerSimulationJob;
const table = buildDropTable(job.rules, job.rarities, job.collectibles);
if (job.kind === 'banner') {
  const seed = job.seed;
  parentPort!.postMessage(
    simulateBanner(table, job.rarities, job.banner, {
      ...job.size,
      randomFor: (i) => fairRandom(seed, 'banner-stats', i),
      ...(job.spark ? { spark: job.spark } : {}),
    }),
  );
} else {
  const sim = new OddsSimulation(table, job.rarities);
  const seed = job.seed;
  sim.run(job.opens, seed ? (i) => fairRandom(seed, 'simulate', i) : () => cryptoRandom);
  parentPort!.postMessage(sim.report());
}
