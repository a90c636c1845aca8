import { Worker, type WorkerOptions } from 'node:worker_threads';
import type { BannerSimulationReport, SimulationReport } from '@ccs/shared';
import type { BannerSimulationJob, SimulationJob } from './job.js';
import { lockAppSimulation } from './app-lock.js';
import { simulationErrors } from '../errors.js';

/**
 * Odds simulations bounded (docs/operations.md, "Admin API"): each runs in a worker thread, one
 * at a time per worker, never on chests' event loop; at most one per app at a time across every chests replica,
 * whether it runs or waits for its turn (the app's Postgres advisory lock, ./app-lock.ts, is taken
 * before the wait, so a queued simulation counts as its app's one); at most `maxConcurrent` at
 * once in this process, across apps (the others wait up to `queueWaitMs` for a turn, at most
 * `maxQueued` of them); and none longer than `timeoutMs`.
 */

export interface SimulationLimits {
  /** Simulations running at once in this chests process, whatever their app. */
  maxConcurrent: number;
  /**
   * Simulations waiting for a turn in this process at once; another gets 503 `overloaded` at once.
   * Each waiting one holds its app's lock, a Postgres connection of its own, so this bounds them.
   */
  maxQueued: number;
  /** How long a simulation waits for one of those turns before 503 `overloaded`. */
  queueWaitMs: number;
  /** A run (worker start included) longer than this is stopped: 503 `simulation_timeout`. */
  timeoutMs: number;
}

/** Whether this module runs from the TypeScript sources (npm start, tests) rather than the compiled dist/. */
const FROM_SOURCE = import.meta.url.endsWith('.ts');

/**
 * A worker thread running ./worker: the compiled worker.js beside this file in production; from
 * the sources, an entry that loads tsx's hooks first and resolves @ccs/shared to its sources, as
 * this process does (`--conditions=development`).
 */
function spawnWorker(): Worker {
  const options: WorkerOptions = { resourceLimits: { maxOldGenerationSizeMb: 256 } };
  if (!FROM_SOURCE) return new Worker(new URL('./worker.js', import.meta.url), options);
  const tsx = import.meta.resolve('tsx/esm/api');
  const entry = new URL('./worker.ts', import.meta.url).href;
  return new Worker(`import(${JSON.stringify(tsx)}).then((tsx) => tsx.register()).then(() => import(${JSON.stringify(entry)}))`, {
    ...options,
    eval: true,
    execArgv: ['--conditions=development'],
  });
}

/**
 * How long a refused caller is asked to wait: the holder may wait for its turn and then run, but
 * the lock does not say since when, so the sum of those bounds, at most 15 s.
 */
const retryAfterSeconds = (limits: SimulationLimits) => Math.max(1, Math.min(limits.queueWaitMs + limits.timeoutMs, 15_000) / 1000);

export class Simulations {
  private running = 0;
  private readonly waiting: (() => void)[] = [];
  /** Workers running a simulation now. */
  private readonly workers = new Set<Worker>();
  /**
   * Workers that finished one and wait for the next: starting a worker (loading the roll code)
   * costs more CPU than a short simulation, so one is kept per turn. A worker that timed out,
   * failed or exited is never kept.
   */
  private readonly idle: Worker[] = [];
  private closed = false;
  /** The apps with a simulation running or waiting in this process: another of them is refused without a connection. */
  private readonly apps = new Set<string>();

  constructor(
    /** Where each run's lock session connects (the service's DATABASE_URL). */
    private readonly databaseUrl: string,
    readonly limits: SimulationLimits,
  ) {}

  /** Runs one simulation of the app's chest: 429 `simulation_busy` while another of the app runs or waits anywhere. */
  run(appId: string, job: SimulationJob): Promise<SimulationReport> {
    return this.bounded(appId, job) as Promise<SimulationReport>;
  }

  /** Runs one simulation of the app's banner (the admin banner stats), under the same bounds. */
  runBanner(appId: string, job: BannerSimulationJob): Promise<BannerSimulationReport> {
    return this.bounded(appId, job) as Promise<BannerSimulationReport>;
  }

  /**
   * The app's lock first, then the turn: a simulation waiting for its turn holds its app, here and
   * on every other replica, so one app never queues more than one. An app already running or
   * waiting in this process is refused before any connection; a full queue too.
   */
  private async bounded(appId: string, job: SimulationJob | BannerSimulationJob): Promise<unknown> {
    if (this.apps.has(appId)) throw simulationErrors.busy(retryAfterSeconds(this.limits));
    if (this.queueFull()) throw this.overloaded();
    this.apps.add(appId);
    try {
      const unlock = await lockAppSimulation(this.databaseUrl, appId, retryAfterSeconds(this.limits));
      try {
        await this.turn();
        try {
          return await this.inWorker(job);
        } finally {
          this.done();
        }
      } finally {
        await unlock();
      }
    } finally {
      this.apps.delete(appId);
    }
  }

  /** Stops every running worker (the service is closing). */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.workers, ...this.idle.splice(0)].map((w) => w.terminate()));
  }

  /** Whether a simulation arriving now would wait, and the queue holds `maxQueued` already. */
  private queueFull(): boolean {
    return this.running >= this.limits.maxConcurrent && this.waiting.length >= this.limits.maxQueued;
  }

  private overloaded() {
    return simulationErrors.overloaded(Math.max(1, this.limits.queueWaitMs / 1000));
  }

  /** Waits for one of the process's `maxConcurrent` turns, first come first served, at most `queueWaitMs` (and behind at most `maxQueued`). */
  private turn(): Promise<void> {
    if (this.running < this.limits.maxConcurrent) {
      this.running++;
      return Promise.resolve();
    }
    if (this.queueFull()) return Promise.reject(this.overloaded());
    return new Promise((resolve, reject) => {
      const waiter = () => {
        clearTimeout(timer);
        this.running++;
        resolve();
      };
      const timer = setTimeout(() => {
        this.waiting.splice(this.waiting.indexOf(waiter), 1);
        reject(this.overloaded());
      }, this.limits.queueWaitMs);
      this.waiting.push(waiter);
    });
  }

  /** Gives the turn back, to the longest waiting simulation if any. */
  private done(): void {
    this.running--;
    this.waiting.shift()?.();
  }

  private inWorker(job: SimulationJob | BannerSimulationJob): Promise<unknown> {
    return new Promise((resolve, reject) => {
      const worker = this.idle.pop() ?? spawnWorker();
      worker.ref();
      this.workers.add(worker);
      let settled = false;
      const finish = (keep: boolean, settle: () => void) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        worker.off('message', onMessage).off('error', onError).off('exit', onExit);
        this.workers.delete(worker);
        if (keep && !this.closed && this.idle.length < this.limits.maxConcurrent) {
          // An idle worker does not keep the process alive.
          worker.unref();
          this.idle.push(worker);
        } else {
          void worker.terminate();
        }
        settle();
      };
      const onMessage = (report: unknown) => finish(true, () => resolve(report));
      const onError = (err: Error) => finish(false, () => reject(err));
      const onExit = (code: number) => finish(false, () => reject(new Error(`the simulation worker exited (${code}) before it answered`)));
      const timer = setTimeout(() => finish(false, () => reject(simulationErrors.timeout(this.limits.timeoutMs))), this.limits.timeoutMs);
      worker.on('message', onMessage).on('error', onError).on('exit', onExit);
      worker.postMessage(job);
    });
  }
}
