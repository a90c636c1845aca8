import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** Starts one TypeScript entry point as a child process with the given environment. */
export function spawnTs(entry: string, env: Record<string, string>, label: string): ChildProcess {
  // BENCH_NODE_ARGS passes flags to every stack process, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof".
  const extra = process.env.BENCH_NODE_ARGS?.split(' ').filter(Boolean) ?? [];
  const child = spawn(process.execPath, [...extra, '--import', 'tsx', '--conditions=development', path.join(ROOT, entry)], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let tail = '';
  const keep = (d: Buffer) => {
    tail = (tail + d.toString()).slice(-4000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  child.once('exit', (code, signal) => {
    if (code && code !== 0 && signal !== 'SIGTERM') console.error(`[bench] ${label} exited with ${code}:\n${tail}`);
  });
  return child;
}

/** Polls a URL until it answers 200, or fails after `timeoutMs` naming what it waited for. */
export async function waitFor(url: string, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      const res = await fetch(url);
      if (res.ok) return;
    } catch {
      /* not up yet */
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`${what} did not become ready at ${url} within ${timeoutMs / 1000}s`);
}

/** Stops children with SIGTERM and waits for them to exit (bounded). */
export async function stopAll(children: ChildProcess[]): Promise<void> {
  await Promise.all(
    children.map(
      (c) =>
        new Promise<void>((resolve) => {
          if (c.exitCode !== null) return resolve();
          const t = setTimeout(() => (c.kill('SIGKILL'), resolve()), 10_000);
          c.once('exit', () => (clearTimeout(t), resolve()));
          c.kill('SIGTERM');
        }),
    ),
  );
}
