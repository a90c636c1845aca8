import type { NatsConnection } from 'nats';

/**
 * How long a starting service waits for JetStream to answer its set-up calls (the grants stream,
 * its durable consumers). On a cluster, a server that restarts or a meta leader that is being
 * elected leaves those calls without an answer for a few seconds; a replica started then (by
 * Kubernetes, or a rolling restart) waits it out instead of exiting.
 */
export const JETSTREAM_SETTLE_MS = 30_000;

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * Runs a JetStream set-up call until it answers, for at most `boundMs`, waiting 0.25 s, 0.5 s, …
 * up to 2 s between tries and saying what it waits for. A server without JetStream (`-js`) is
 * not transient: the first error is thrown at once.
 */
export async function whileJetStreamSettles<T>(
  what: string,
  call: () => Promise<T>,
  o: { nc: NatsConnection; log: { warn(obj: object, msg: string): void }; boundMs?: number },
): Promise<T> {
  const deadline = Date.now() + (o.boundMs ?? JETSTREAM_SETTLE_MS);
  for (let attempt = 0; ; attempt++) {
    try {
      return await call();
    } catch (err) {
      if (o.nc.info?.jetstream === false || o.nc.isClosed() || Date.now() >= deadline) throw err;
      const waitMs = Math.min(250 * 2 ** attempt, 2000);
      o.log.warn(
        { err: String(err), attempt: attempt + 1, waitMs },
        `${what}: JetStream did not answer; trying again (a NATS server restarting or a leader being elected)`,
      );
      await sleep(waitMs);
    }
  }
}
