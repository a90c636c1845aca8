import { parentPort, workerData } from 'node:worker_threads';
import { buildDropTable, cryptoRandom, fairRandom, OddsSimulation } from '@ccs/shared/domain';
import type { SimulationJob } from './job.js';

/**
 * One odds simulation in a worker thread (./runner.ts starts it): the production roll and pity
 * code on the chest's rules, off chests' event loop. Posts the report and ends.
 */
const job = workerData as SimulationJob;
const sim = new OddsSimulation(buildDropTable(job.rules, job.rarities, job.collectibles), job.rarities);
const seed = job.seed;
sim.run(job.opens, seed ? (i) => fairRandom(seed, 'simulate', i) : () => cryptoRandom);
parentPort!.postMessage(sim.report());
