import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { freePort } from '@ccs/shared/testing';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));

/** How a replica process ended. */
export interface ReplicaExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** One service process of a test stack, started the way `npm start` and the image start it. */
export interface Replica {
  label: string;
  child: ChildProcess;
  /** Base URL of its HTTP port (/livez and /readyz; the gateway's API port). */
  healthUrl: string;
  port: number;
  exited: Promise<ReplicaExit>;
  /** The last lines it printed (for failure messages). */
  output(): string;
  /** Resolves once /readyz answers 200; fails (with its output) after `timeoutMs` or if it exits. */
  waitReady(timeoutMs?: number): Promise<void>;
  /** Sends SIGTERM and waits for the exit (SIGKILL after `boundMs`); says how long the stop took. */
  terminate(boundMs?: number): Promise<ReplicaExit & { ms: number }>;
}

/**
 * Starts `services/<service>/src/main.ts` as a child process with the stack's environment, its
 * HTTP port (`HEALTH_PORT`, or `PORT` for the gateway) on a free port.
 */
export async function startReplica(service: string, env: Record<string, string>, label: string): Promise<Replica> {
  const port = await freePort();
  const portVar = service === 'gateway' ? 'PORT' : 'HEALTH_PORT';
  const child = spawn(process.execPath, ['--import', 'tsx', '--conditions=development', `services/${service}/src/main.ts`], {
    cwd: ROOT,
    // Info logs (kept in memory) hold the drain report: `<service> service stopped`.
    env: { ...process.env, ...env, LOG_LEVEL: 'info', HOST: '127.0.0.1', [portVar]: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let tail = '';
  const keep = (d: Buffer) => void (tail = (tail + d.toString()).slice(-20_000));
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const exited = new Promise<ReplicaExit>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const healthUrl = `http://127.0.0.1:${port}`;
  let gone = false;
  void exited.then(() => (gone = true));

  return {
    label,
    child,
    healthUrl,
    port,
    exited,
    output: () => tail,
    async waitReady(timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      while (Date.now() < deadline && !gone) {
        const res = await fetch(`${healthUrl}/readyz`).catch(() => undefined);
        if (res?.status === 200) return;
        await new Promise((r) => setTimeout(r, 100));
      }
      throw new Error(`${label} ${gone ? 'exited' : 'was not ready in time'}; its output:\n${tail.slice(-4000)}`);
    },
    async terminate(boundMs = 30_000) {
      const began = Date.now();
      if (!gone) child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), boundMs);
      const exit = await exited;
      clearTimeout(timer);
      return { ...exit, ms: Date.now() - began };
    },
  };
}

/** Reads a line-delimited pino log and returns the parsed entries whose `msg` matches. */
export function logEntries(output: string, msg: RegExp): Record<string, unknown>[] {
  return output
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => {
      try {
        return JSON.parse(l) as Record<string, unknown>;
      } catch {
        return {};
      }
    })
    .filter((e) => typeof e.msg === 'string' && msg.test(e.msg));
}
