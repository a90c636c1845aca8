import { connect, type NatsConnection } from 'nats';
import { healthSubject } from '../../packages/shared/src/runtime/service.js';
import { prefixed } from '../../packages/shared/src/runtime/subjects.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const EMPTY_OBJECT = new TextEncoder().encode('{}');

/** Thrown when something did not become ready in time, or the launcher is stopping. */
export class NotReadyError extends Error {
  override name = 'NotReadyError';
}

/**
 * Waits until one service answers its health subject over NATS (bounded), e.g. players before
 * the others start. `aborted` lets the launcher give up early when a child has died.
 */
export async function waitForServiceHealth(opts: {
  natsUrl: string;
  prefix: string;
  service: string;
  timeoutMs: number;
  aborted: () => boolean;
}): Promise<void> {
  const nc: NatsConnection = await connect({ servers: opts.natsUrl, reconnect: false });
  const subject = prefixed(opts.prefix, healthSubject(opts.service).subject);
  const deadline = Date.now() + opts.timeoutMs;
  try {
    while (!opts.aborted()) {
      const ok = await nc
        .request(subject, EMPTY_OBJECT, { timeout: 1000 })
        .then((m) => m.json<{ ok?: boolean }>().ok === true)
        .catch(() => false);
      if (ok) return;
      if (Date.now() > deadline) throw new NotReadyError(`${opts.service} did not answer within ${opts.timeoutMs / 1000} s`);
      await sleep(250);
    }
    throw new NotReadyError('stopping');
  } finally {
    await nc.close().catch(() => undefined);
  }
}

/** The gateway's /readyz answer: overall status and one check per service (and Redis). */
interface Readiness {
  status?: string;
  checks?: Record<string, boolean>;
}

async function readiness(url: string): Promise<{ ready: boolean; waitingFor: string }> {
  try {
    const res = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(3000) });
    const body = (await res.json()) as Readiness;
    const pending = Object.entries(body.checks ?? {})
      .filter(([, ok]) => !ok)
      .map(([name]) => name);
    return { ready: res.status === 200, waitingFor: pending.length ? pending.join(', ') : 'readiness' };
  } catch {
    return { ready: false, waitingFor: 'the gateway to listen' };
  }
}

/**
 * Polls the gateway's /readyz until it answers 200, printing what it still waits for whenever
 * that changes (and every few seconds), so the wait is visible. Bounded by `timeoutMs`.
 */
export async function waitForGateway(opts: {
  url: string;
  timeoutMs: number;
  aborted: () => boolean;
  progress: (line: string) => void;
}): Promise<void> {
  const started = Date.now();
  let last = '';
  let lastPrinted = 0;
  while (!opts.aborted()) {
    const state = await readiness(opts.url);
    if (state.ready) return;
    const elapsed = Date.now() - started;
    if (elapsed > opts.timeoutMs) {
      throw new NotReadyError(`${opts.url}/readyz not ready after ${opts.timeoutMs / 1000} s (waiting for ${state.waitingFor})`);
    }
    if (state.waitingFor !== last || Date.now() - lastPrinted > 5000) {
      opts.progress(`waiting for ${state.waitingFor} (${Math.round(elapsed / 1000)} s)`);
      last = state.waitingFor;
      lastPrinted = Date.now();
    }
    await sleep(500);
  }
  throw new NotReadyError('stopping');
}
