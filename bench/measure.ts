/**
 * One measurement: autocannon against one request shape for a duration, with the first non-2xx
 * answer kept (status and body) so a regression is visible, and the CPU each process used.
 */
import autocannon from 'autocannon';
import type { CpuMeter, CpuUse } from './cpu.js';
import type { Statements } from './statements.js';

/** One request to send; `next` (when given) builds each request, e.g. a fresh chest each time. */
export interface Load {
  method?: 'GET' | 'POST';
  path?: string;
  headers?: Record<string, string>;
  body?: string;
  next?: () => { path: string; headers: Record<string, string>; body?: string };
  /**
   * Units left to consume (fresh chests, purchase budget): the run sends at most that many
   * requests (autocannon's `amount`) and still stops after the duration.
   */
  remaining?: () => number;
  /**
   * Prepares more units when fewer remain than the assumed peak rate consumes in `seconds`
   * (called before each measurement), so no run can exhaust them.
   */
  topUp?: (seconds: number) => Promise<void>;
}

export interface Measured {
  /** Answers received within the duration. */
  requests: number;
  /** Requests sent: the answered ones and those still in flight when the run stopped. */
  sent: number;
  seconds: number;
  rps: number;
  mean: number;
  p50: number;
  p99: number;
  max: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  statusCodes: Record<string, number>;
  /** The first non-2xx answer: status and the start of its body. */
  firstNon2xx?: { status: number; body: string };
  cpu?: CpuUse;
  /** A saga floor's run: how long after the load its consumers took to apply every message (ms). */
  drainedMs?: number;
  /** Postgres per statement during the measurement (BENCH_STATEMENTS=1 only). */
  statements?: Statements;
}

export async function measure(
  base: string,
  load: Load,
  o: { connections: number; seconds: number; cpu?: CpuMeter; drain?: () => Promise<number> },
): Promise<Measured> {
  let firstNon2xx: Measured['firstNon2xx'];
  const onResponse = (status: number, body: string) => {
    if ((status < 200 || status > 299) && !firstNon2xx) firstNon2xx = { status, body: String(body).slice(0, 400) };
  };
  const request: autocannon.Request = {
    method: load.method ?? 'GET',
    path: load.path ?? '/',
    headers: load.headers,
    body: load.body,
    onResponse,
  } as autocannon.Request;
  if (load.next) {
    const next = load.next;
    request.setupRequest = (req) => {
      const n = next();
      return { ...req, method: load.method ?? 'GET', path: n.path, headers: n.headers, ...(n.body === undefined ? {} : { body: n.body }) };
    };
  }
  const amount = load.remaining?.();
  if (amount !== undefined && amount < o.connections) throw new Error(`only ${amount} prepared units left, fewer than ${o.connections} connections`);
  const opts: autocannon.Options = {
    url: base,
    connections: o.connections,
    requests: [request],
    ...(amount === undefined ? { duration: o.seconds } : { amount }),
  };
  const started = await o.cpu?.start();
  const r = await new Promise<autocannon.Result>((resolve, reject) => {
    const instance = autocannon(opts, (err, result) => (err ? reject(err) : resolve(result)));
    // With an amount autocannon has no duration: stop it ourselves (the amount is only a cap).
    if (amount !== undefined) {
      const timer = setTimeout(() => instance.stop(), o.seconds * 1000);
      instance.once('done', () => clearTimeout(timer));
    }
  });
  const seconds = r.duration || o.seconds;
  // A saga floor: its requests' work ends when the consumers applied their messages, not at the last answer.
  const drainedMs = await o.drain?.();
  const cpu = await o.cpu?.stop(started, drainedMs === undefined ? undefined : seconds);
  return {
    requests: r.requests.total,
    sent: (r.requests as { sent?: number }).sent ?? r.requests.total,
    seconds,
    rps: Math.round(r.requests.total / seconds),
    mean: Math.round(r.latency.average * 100) / 100,
    p50: r.latency.p50,
    p99: r.latency.p99,
    max: r.latency.max,
    non2xx: r.non2xx,
    errors: r.errors,
    timeouts: r.timeouts,
    statusCodes: statusCodesOf(r),
    firstNon2xx,
    cpu,
    ...(drainedMs === undefined ? {} : { drainedMs }),
  };
}

/** How many answers of each status code the run received. */
function statusCodesOf(r: autocannon.Result): Record<string, number> {
  const statusCodes: Record<string, number> = {};
  for (const [code, v] of Object.entries((r as unknown as { statusCodeStats?: Record<string, { count: number }> }).statusCodeStats ?? {}))
    statusCodes[code] = v.count;
  return statusCodes;
}
