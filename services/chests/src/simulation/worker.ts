import { parentPort } from 'node:worker_threads';
import {
  buildDropTable,
  cryptoRandom,
  fairRandom,
  OddsSimulation,
  simulateBanner,
  type BannerSimulationReport,
  type SimulationReport,
} from '@ccs/shared/domain';
import type { BannerSimulationJob, SimulationJob } from './job.js';

/**
 * Simulations in a worker thread (./runner.ts starts it and keeps it for the next run): the
 * production roll, pity and banner code on the chest's rules, off chests' event loop. Each
 * message is one job; the answer is its report.
 */
function simulate(job: SimulationJob | BannerSimulationJob): SimulationReport | BannerSimulationReport {
  const table = buildDropTable(job.rules, job.rarities, job.collectibles);
  if (job.kind === 'banner') {
    const seed = job.seed;
    return simulateBanner(table, job.rarities, job.banner, {
      ...job.size,
      randomFor: (i) => fairRandom(seed, 'banner-stats', i),
      ...(job.spark ? { spark: job.spark } : {}),
    });
  }
  const sim = new OddsSimulation(table, job.rarities);
  const seed = job.seed;
  sim.run(job.opens, seed ? (i) => fairRandom(seed, 'simulate', i) : () => cryptoRandom);
  return sim.report();
}

parentPort!.on('message', (job: SimulationJob | BannerSimulationJob) => parentPort!.postMessage(simulate(job)));
