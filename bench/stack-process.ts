import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** One process the bench started: a service, a replica, or a floor process. */
export interface BenchProcess {
  label: string;
  child: ChildProcess;
  /** The last few KB it printed (stdout and stderr), for a failure report. */
  tail(): string;
  /** True once it has exited. */
  exited(): boolean;
  /** Set when it exited without being asked to (code, signal). */
  unexpectedExit?: string;
}

/**
 * Starts one TypeScript entry point as a child process with the given environment, the way
 * `npm start` does (scripts/start/service-process.ts): `node --import tsx --conditions=development
 * <entry>`, so the bench measures the same code the stack runs from source.
 */
export function spawnTs(entry: string, env: Record<string, string>, label: string): BenchProcess {
  // BENCH_NODE_ARGS passes flags to every stack process, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof".
  const extra = process.env.BENCH_NODE_ARGS?.split(' ').filter(Boolean) ?? [];
  const child = spawn(process.execPath, [...extra, '--import', 'tsx', '--conditions=development', path.join(ROOT, entry)], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let tail = '';
  let done = false;
  let stopping = false;
  const keep = (d: Buffer) => {
    tail = (tail + d.toString()).slice(-8000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const proc: BenchProcess = { label, child, tail: () => tail, exited: () => done };
  const originalKill = child.kill.bind(child);
  child.kill = (signal?: NodeJS.Signals | number) => {
    stopping = true;
    return originalKill(signal);
  };
  child.once('exit', (code, signal) => {
    done = true;
    // SIGINT: Ctrl-C reached the whole process group; the bench is stopping too.
    if (stopping || signal === 'SIGINT') return;
    proc.unexpectedExit = signal ? `signal ${signal}` : `exit code ${code}`;
    console.error(`[bench] ${label} exited unexpectedly (${proc.unexpectedExit}); its last output:\n${tail}`);
  });
  return proc;
}

/** Polls a URL until it answers 200, or fails after `timeoutMs` naming what it waited for. */
export async function waitFor(url: string, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(3000) });
      if (res.ok) return;
      last = `${res.status} ${(await res.text()).slice(0, 200)}`;
    } catch (err) {
      last = err instanceof Error ? err.message : String(err);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`${what} did not become ready at ${url} within ${timeoutMs / 1000}s (last answer: ${last})`);
}

/** Stops processes with SIGTERM and waits for them to exit (bounded; SIGKILL after 15 s). */
export async function stopAll(procs: BenchProcess[]): Promise<void> {
  await Promise.all(
    procs.map(
      ({ child }) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          const t = setTimeout(() => (child.kill('SIGKILL'), resolve()), 15_000);
          child.once('exit', () => (clearTimeout(t), resolve()));
          child.kill('SIGTERM');
        }),
    ),
  );
}
