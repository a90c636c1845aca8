/**
 * The stack of a chaos run: each service its own process, started one by one as `npm start` does
 * (players first: it creates the demo app), each backend with a health port and the gateway on a
 * free port. A service can be killed (SIGKILL) and started again, as Kubernetes would restart it;
 * an exit nobody asked for is recorded, since it is a finding of its own.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync, existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, sleep } from './infra.js';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
export const SERVICES = ['players', 'wallet', 'chests', 'collections', 'gateway'] as const;
export type Service = (typeof SERVICES)[number];

/**
 * How the services run: `tsx`, from the TypeScript sources as `npm start` runs them; `dist`, the
 * compiled JavaScript of `npm run build`, as the Docker image (and so Kubernetes) runs them.
 */
export type Runtime = 'tsx' | 'dist';

/** `auto`: dist when it is there and newer than every source, else tsx (a stale build is never run). */
export function chooseRuntime(wanted: Runtime | 'auto'): { runtime: Runtime; why: string } {
  if (wanted !== 'auto') return { runtime: wanted, why: `CHAOS_RUNTIME=${wanted}` };
  const stale = distUnusable();
  return stale
    ? { runtime: 'tsx', why: `${stale}; npm run build first to run them as deployed, which starts about twice as fast` }
    : { runtime: 'dist', why: 'dist/ is newer than every source' };
}

/** Newest modification time of the files under `dir` whose names end in `ext` (0 when none). */
function newest(dir: string, ext: string): number {
  if (!existsSync(dir)) return 0;
  let t = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    t = Math.max(t, e.isDirectory() ? newest(p, ext) : e.name.endsWith(ext) ? statSync(p).mtimeMs : 0);
  }
  return t;
}

/** Why the compiled services cannot be used (missing, or older than their sources), or undefined. */
export function distUnusable(): string | undefined {
  for (const w of ['packages/shared', ...SERVICES.map((s) => `services/${s}`)]) {
    const entry = path.join(ROOT, w, 'dist', w === 'packages/shared' ? 'index.js' : 'main.js');
    if (!existsSync(entry)) return `${w} is not compiled (no ${path.relative(ROOT, entry)})`;
    // tsc -b rewrites only the outputs that changed: the newest output against the newest source.
    if (newest(path.join(ROOT, w, 'src'), '.ts') > newest(path.join(ROOT, w, 'dist'), '.js')) return `${w}/dist is older than its sources`;
  }
  return undefined;
}

interface Running {
  child: ChildProcess;
  exited: Promise<void>;
  gone: boolean;
  expectedExit: boolean;
}

export class ChaosStack {
  readonly base: string;
  private readonly ports = new Map<Service, number>();
  private readonly running = new Map<Service, Running>();
  private readonly tails = new Map<Service, string>();
  /** Exits nobody asked for: "chests exited (code 1) at …". */
  readonly crashes: string[] = [];
  private stopping = false;

  private constructor(
    readonly env: Record<string, string>,
    private readonly gatewayPort: number,
    private readonly logFile: string,
    readonly runtime: Runtime,
  ) {
    this.base = `http://127.0.0.1:${gatewayPort}`;
  }

  static async create(env: Record<string, string>, logFile: string, runtime: Runtime): Promise<ChaosStack> {
    const stack = new ChaosStack(env, await freePort(), logFile, runtime);
    for (const s of SERVICES) stack.ports.set(s, s === 'gateway' ? stack.gatewayPort : await freePort());
    return stack;
  }

  /** The service's readiness URL (its own health port; the gateway's /readyz). */
  readyUrl(s: Service): string {
    return `http://127.0.0.1:${this.ports.get(s)}/readyz`;
  }

  /** The last output of a service (for failure reports). */
  tail(s: Service): string {
    return this.tails.get(s) ?? '';
  }

  /** Starts one service process (same ports as before, so the gateway's URL never changes). */
  start(s: Service): void {
    const port = String(this.ports.get(s));
    const entry =
      this.runtime === 'dist' ? [`services/${s}/dist/main.js`] : ['--import', 'tsx', '--conditions=development', `services/${s}/src/main.ts`];
    const child = spawn(process.execPath, entry, {
      cwd: ROOT,
      env: { ...process.env, ...this.env, HOST: '127.0.0.1', ...(s === 'gateway' ? { PORT: port } : { HEALTH_PORT: port }) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const r: Running = { child, gone: false, expectedExit: false, exited: Promise.resolve() };
    r.exited = new Promise<void>((resolve) =>
      child.once('exit', (code, signal) => {
        r.gone = true;
        if (!r.expectedExit && !this.stopping) {
          const how = signal ? `signal ${signal}` : `exit code ${code}`;
          this.crashes.push(`${s} exited by itself (${how}) at ${new Date().toISOString()}`);
          this.note(s, `!!! exited by itself (${how})`);
        }
        resolve();
      }),
    );
    const keep = (d: Buffer) => {
      const text = d.toString();
      this.tails.set(s, ((this.tails.get(s) ?? '') + text).slice(-8000));
      try {
        appendFileSync(
          this.logFile,
          text
            .split('\n')
            .filter(Boolean)
            .map((l) => `${s.padEnd(11)}| ${l}\n`)
            .join(''),
        );
      } catch {
        // the log file is a convenience
      }
    };
    child.stdout!.on('data', keep);
    child.stderr!.on('data', keep);
    this.running.set(s, r);
    this.note(s, `started (pid ${child.pid})`);
  }

  private note(s: Service, line: string): void {
    try {
      appendFileSync(this.logFile, `${s.padEnd(11)}| [chaos] ${new Date().toISOString()} ${line}\n`);
    } catch {
      // ignore
    }
  }

  /** The service's current process id. */
  pid(s: Service): number | undefined {
    return this.running.get(s)?.child.pid;
  }

  /** True while the service's process runs. */
  alive(s: Service): boolean {
    const r = this.running.get(s);
    return !!r && !r.gone;
  }

  /** Waits until the service's /readyz answers 200 (bounded; fails early if it exits). */
  async waitReady(s: Service, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let last = '';
    while (Date.now() < deadline) {
      if (!this.alive(s)) throw new Error(`${s} exited while starting; its last output:\n${this.tail(s).slice(-3000)}`);
      try {
        const res = await fetch(this.readyUrl(s), { signal: AbortSignal.timeout(2000) });
        if (res.status === 200) return;
        last = `${res.status} ${(await res.text()).slice(0, 200)}`;
      } catch (err) {
        last = String(err);
      }
      await sleep(50);
    }
    throw new Error(`${s} was not ready within ${timeoutMs / 1000} s (last answer: ${last}); its last output:\n${this.tail(s).slice(-3000)}`);
  }

  /** Starts the five services one by one, each once the one before is ready. */
  async startAll(progress: (line: string) => void, timeoutMs: number): Promise<void> {
    for (const s of SERVICES) {
      const t = Date.now();
      this.start(s);
      await this.waitReady(s, timeoutMs);
      progress(`${s} ready (${((Date.now() - t) / 1000).toFixed(1)} s)`);
    }
  }

  /** kill -9 of the service; resolves once the process is gone. */
  async kill(s: Service): Promise<void> {
    const r = this.running.get(s);
    if (!r || r.gone) return;
    r.expectedExit = true;
    r.child.kill('SIGKILL');
    await r.exited;
    this.note(s, 'killed with SIGKILL');
  }

  /** Stops every service (SIGTERM, SIGKILL after `boundMs`). */
  async stopAll(boundMs = 15_000): Promise<void> {
    this.stopping = true;
    await Promise.all(
      [...this.running.values()].map(async (r) => {
        if (r.gone) return;
        r.expectedExit = true;
        r.child.kill('SIGTERM');
        const timer = setTimeout(() => r.child.kill('SIGKILL'), boundMs);
        await r.exited;
        clearTimeout(timer);
      }),
    );
  }
}
