import { randomUUID } from 'node:crypto';
import { Worker, type WorkerOptions } from 'node:worker_threads';
import type { Redis } from 'ioredis';
import { AppError, type SimulationReport } from '@ccs/shared';
import type { SimulationJob } from './job.js';

/**
 * Odds simulations bounded (docs/operations.md, "Admin API"; DESIGN §6 "Costly studio work is
 * bounded"): each runs in a worker thread of its own, never on the gateway's event loop; at most
 * one per app at a time across every gateway replica (a lock in Redis); at most
 * `maxConcurrent` at once in this process, across apps (the others wait up to `queueWaitMs` for
 * a turn); and none longer than `timeoutMs`.
 */

export interface SimulationLimits {
  /** Simulations running at once in this gateway process, whatever their app. */
  maxConcurrent: number;
  /** How long a simulation waits for one of those turns before 503 `overloaded`. */
  queueWaitMs: number;
  /** A run (worker start included) longer than this is stopped: 503 `simulation_timeout`. */
  timeoutMs: number;
  /** Lifetime of the per-app lock in Redis, renewed every third of it while the run lasts: a replica that dies mid-run frees its app within it. */
  lockTtlMs: number;
}

/** The errors of a bounded simulation, with the codes clients see. */
export const simulationErrors = {
  busy: (retryAfterSeconds: number) =>
    new AppError({
      status: 429,
      code: 'simulation_busy',
      title: 'Too Many Requests',
      detail: 'A simulation of this app is already running, and an app runs one at a time: retry once it has finished (Retry-After).',
      meta: { retry_after_seconds: Math.max(1, Math.ceil(retryAfterSeconds)) },
    }),
  overloaded: (retryAfterSeconds: number) =>
    AppError.overloaded('Too many simulations are running on this gateway right now; nothing was done, retry shortly.', retryAfterSeconds),
  timeout: (timeoutMs: number) =>
    AppError.unavailable(
      'simulation_timeout',
      `The simulation did not finish within ${Math.round(timeoutMs / 1000)} s and was stopped; ask for fewer openings.`,
    ),
  lockUnavailable: () =>
    AppError.unavailable('service_unavailable', 'Redis, which keeps one simulation per app at a time, is not reachable. Retry shortly.'),
};

/** Extends the lock by its lifetime if this holder still owns it. */
const RENEW = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) else return 0 end";
/** Frees the lock if this holder still owns it (never another's, taken after this one's expired). */
const RELEASE = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end";

/** Whether this module runs from the TypeScript sources (npm start, tests) rather than the compiled dist/. */
const FROM_SOURCE = import.meta.url.endsWith('.ts');

/**
 * A worker thread running ./worker: the compiled worker.js beside this file in production; from
 * the sources, an entry that loads tsx's hooks first and resolves @ccs/shared to its sources, as
 * this process does (`--conditions=development`).
 */
function spawnWorker(job: SimulationJob): Worker {
  const options: WorkerOptions = { workerData: job, resourceLimits: { maxOldGenerationSizeMb: 256 } };
  if (!FROM_SOURCE) return new Worker(new URL('./worker.js', import.meta.url), options);
  const tsx = import.meta.resolve('tsx/esm/api');
  const entry = new URL('./worker.ts', import.meta.url).href;
  return new Worker(`import(${JSON.stringify(tsx)}).then((tsx) => tsx.register()).then(() => import(${JSON.stringify(entry)}))`, {
    ...options,
    eval: true,
    execArgv: ['--conditions=development'],
  });
}

export class Simulations {
  private running = 0;
  private readonly waiting: (() => void)[] = [];
  private readonly workers = new Set<Worker>();

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    readonly limits: SimulationLimits,
  ) {}

  /** Runs one simulation of the app's chest: 429 `simulation_busy` while another of the app runs anywhere. */
  async run(appId: string, job: SimulationJob): Promise<SimulationReport> {
    const unlock = await this.lock(appId);
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
  }

  /** Stops every running worker (the gateway is closing). */
  async close(): Promise<void> {
    await Promise.all([...this.workers].map((w) => w.terminate()));
  }

  /** Takes the app's lock (SET NX PX with a token of this run), renewed while held; answers its release. */
  private async lock(appId: string): Promise<() => Promise<void>> {
    const key = `${this.prefix}simulation:${appId}`;
    const token = randomUUID();
    const ttl = this.limits.lockTtlMs;
    let taken: string | null;
    try {
      taken = await this.redis.set(key, token, 'PX', ttl, 'NX');
    } catch {
      throw simulationErrors.lockUnavailable();
    }
    if (taken !== 'OK') {
      // The holder renews its lock while it runs: its time to live bounds the wait.
      const left = await this.redis.pttl(key).catch(() => ttl);
      throw simulationErrors.busy((left > 0 ? left : 1000) / 1000);
    }
    const renew = setInterval(
      () => void this.redis.eval(RENEW, 1, key, token, String(ttl)).catch(() => undefined),
      Math.max(50, Math.floor(ttl / 3)),
    );
    renew.unref();
    return async () => {
      clearInterval(renew);
      await this.redis.eval(RELEASE, 1, key, token).catch(() => undefined);
    };
  }

  /** Waits for one of the process's `maxConcurrent` turns, first come first served, at most `queueWaitMs`. */
  private turn(): Promise<void> {
    if (this.running < this.limits.maxConcurrent) {
      this.running++;
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => {
      const waiter = () => {
        clearTimeout(timer);
        this.running++;
        resolve();
      };
      const timer = setTimeout(() => {
        this.waiting.splice(this.waiting.indexOf(waiter), 1);
        reject(simulationErrors.overloaded(this.limits.queueWaitMs / 1000));
      }, this.limits.queueWaitMs);
      this.waiting.push(waiter);
    });
  }

  /** Gives the turn back, to the longest waiting simulation if any. */
  private done(): void {
    this.running--;
    this.waiting.shift()?.();
  }

  private inWorker(job: SimulationJob): Promise<SimulationReport> {
    return new Promise((resolve, reject) => {
      const worker = spawnWorker(job);
      this.workers.add(worker);
      let settled = false;
      const finish = (settle: () => void) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        this.workers.delete(worker);
        void worker.terminate();
        settle();
      };
      const timer = setTimeout(() => finish(() => reject(simulationErrors.timeout(this.limits.timeoutMs))), this.limits.timeoutMs);
      worker.once('message', (report: SimulationReport) => finish(() => resolve(report)));
      worker.once('error', (err) => finish(() => reject(err)));
      worker.once('exit', (code) => finish(() => reject(new Error(`the simulation worker exited (${code}) before it answered`))));
    });
  }
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The gateway's bounded odds simulations (set up by buildApp). */
    simulations: Simulations;
  }
}
