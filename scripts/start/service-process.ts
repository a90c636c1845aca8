import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { IP } from '../cluster/netns/lab.js';

/**
 * The seven processes of the stack, in start order: players first, it seeds the demo app; egress
 * sends webhooks; store (after wallet and chests, which apply what a purchase grants) verifies
 * App Store and Google Play purchases.
 */
export const SERVICE_NAMES = ['players', 'wallet', 'chests', 'collections', 'egress', 'store', 'gateway'] as const;
export type ServiceName = (typeof SERVICE_NAMES)[number];

/** How a child process ended. */
export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** One running service process. */
export interface ServiceProcess {
  name: ServiceName;
  child: ChildProcess;
  /** Resolves when the process has exited, however it ended. */
  exited: Promise<Exit>;
  /** True once the process has exited. */
  hasExited(): boolean;
}

const COLORS: Record<ServiceName, number> = { players: 36, wallet: 33, chests: 35, collections: 34, egress: 31, store: 93, gateway: 32 };
const LEVELS: Record<number, string> = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO', 40: 'WARN', 50: 'ERROR', 60: 'FATAL' };
const PINO_BOOKKEEPING = new Set(['level', 'time', 'pid', 'hostname', 'name', 'msg']);

/** Turns one pino JSON line into `LEVEL message {other fields}`; other text stays as it is. */
export function readableLogLine(line: string): string {
  if (!line.startsWith('{')) return line;
  let entry: unknown;
  try {
    entry = JSON.parse(line);
  } catch {
    return line;
  }
  if (typeof entry !== 'object' || entry === null || !('msg' in entry)) return line;
  const record = entry as Record<string, unknown>;
  const level = typeof record.level === 'number' ? (LEVELS[record.level] ?? String(record.level)) : 'INFO';
  const rest = Object.fromEntries(Object.entries(record).filter(([k]) => !PINO_BOOKKEEPING.has(k)));
  const extra = Object.keys(rest).length ? ` ${JSON.stringify(rest)}` : '';
  return `${level.padEnd(5)} ${String(record.msg)}${extra}`;
}

/** The label in front of every line of a service, colored on a terminal. */
function label(name: ServiceName, color: boolean): string {
  const text = `${name.padEnd(11)}|`;
  return color ? `\u001b[${COLORS[name]}m${text}\u001b[0m` : text;
}

/**
 * Starts one service as a child process (`node --import tsx --conditions=development
 * services/<name>/src/main.ts`), the same entry point `npm start -w services/<name>` runs,
 * and passes each line it prints to `print`, prefixed with the service name.
 */
export function startServiceProcess(
  name: ServiceName,
  opts: { cwd: string; env: NodeJS.ProcessEnv; color: boolean; print: (line: string) => void; onLine?: (line: string) => void; netns?: string },
): ServiceProcess {
  const args = ['--import', 'tsx', '--conditions=development', `services/${name}/src/main.ts`];
  // In a network namespace (the cluster's partition drills): `ip netns exec` execs node, so the pid is the service's.
  const [file, argv] = opts.netns ? [IP, ['netns', 'exec', opts.netns, process.execPath, ...args]] : [process.execPath, args];
  const child = spawn(file, argv, {
    cwd: opts.cwd,
    env: opts.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const prefix = label(name, opts.color);
  for (const stream of [child.stdout, child.stderr]) {
    createInterface({ input: stream }).on('line', (raw) => {
      const line = readableLogLine(raw);
      opts.onLine?.(line);
      opts.print(`${prefix} ${line}`);
    });
  }
  return { name, child, ...watchExit(child) };
}

/** When a child process ends (its exit, or a failure to start: code 1), and whether it has. */
export function watchExit(child: ChildProcess): { exited: Promise<Exit>; hasExited(): boolean } {
  let done = false;
  const exited = new Promise<Exit>((resolve) => {
    child.once('exit', (code, signal) => {
      done = true;
      resolve({ code, signal });
    });
    child.once('error', () => {
      done = true;
      resolve({ code: 1, signal: null });
    });
  });
  return { exited, hasExited: () => done };
}
