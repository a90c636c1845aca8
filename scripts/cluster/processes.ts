/**
 * Small helpers of the cluster launcher: free loopback ports, child processes whose output is
 * labelled and kept, and bounded waits.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { createInterface } from 'node:readline';
import { watchExit } from '../start/service-process.js';

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** A TCP port nothing listens on now (the kernel picks it on 127.0.0.1). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** `n` distinct free ports. */
export async function freePorts(n: number): Promise<number[]> {
  const ports = new Set<number>();
  while (ports.size < n) ports.add(await freePort());
  return [...ports];
}

/** How a child ended. */
export interface Ended {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** A child process of the cluster (a nats-server, pgbouncer, a service replica). */
export interface Child {
  /** n1, pgbouncer, chests-2, … */
  name: string;
  child: ChildProcess;
  exited: Promise<Ended>;
  hasExited(): boolean;
  /** The last lines it printed (for a failure message). */
  tail(): string[];
}

const TAIL_LINES = 40;

/** Wraps a spawned process: its lines go to `print` with a label, the last ones are kept. */
export function track(name: string, child: ChildProcess, print: (line: string) => void, label = name): Child {
  const lines: string[] = [];
  const prefix = `${label.padEnd(13)}|`;
  for (const stream of [child.stdout, child.stderr]) {
    if (!stream) continue;
    createInterface({ input: stream }).on('line', (line) => {
      lines.push(line);
      if (lines.length > TAIL_LINES) lines.shift();
      print(`${prefix} ${line}`);
    });
  }
  return { name, child, ...watchExit(child), tail: () => [...lines] };
}

/** Starts a program as a tracked child (its own stdout and stderr piped). */
export function startProgram(name: string, file: string, args: string[], print: (line: string) => void, env?: NodeJS.ProcessEnv): Child {
  return track(name, spawn(file, args, { stdio: ['ignore', 'pipe', 'pipe'], env: env ?? process.env }), print);
}

/** SIGTERM, then SIGKILL after `graceMs`; resolves when the process is gone. */
export async function stopChild(c: Child, graceMs: number): Promise<Ended> {
  if (!c.hasExited()) c.child.kill('SIGTERM');
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((r) => (timer = setTimeout(() => r('late'), graceMs)));
  const result = await Promise.race([c.exited, late]);
  clearTimeout(timer);
  if (result !== 'late') return result;
  c.child.kill('SIGKILL');
  return c.exited;
}

/**
 * Polls `check` every `everyMs` until it returns a value (not undefined), or throws after
 * `timeoutMs` with `what` and the last error; `dead` stops the wait early (a child exited).
 */
export async function waitFor<T>(
  what: string,
  check: () => Promise<T | undefined>,
  opts: { timeoutMs: number; everyMs?: number; dead?: () => string | undefined },
): Promise<T> {
  const deadline = Date.now() + opts.timeoutMs;
  let last: unknown;
  for (;;) {
    const why = opts.dead?.();
    if (why) throw new Error(`${what}: ${why}`);
    try {
      const v = await check();
      if (v !== undefined) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`${what}: not within ${opts.timeoutMs / 1000} s${last ? ` (${String(last)})` : ''}`);
    await sleep(opts.everyMs ?? 250);
  }
}

/** The status an HTTP GET of `url` answers (0: no answer within `timeoutMs`), its body discarded. */
export async function httpStatus(url: string, timeoutMs = 1500): Promise<number> {
  const res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) }).catch(() => undefined);
  if (!res) return 0;
  await res.body?.cancel().catch(() => undefined);
  return res.status;
}
