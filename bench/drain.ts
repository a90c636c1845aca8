/**
 * When the saga floor's consumers (bench/floor-consumer.ts) have applied every message: a saga
 * floor's run is counted until then, as an opening's work ends only when its grant is applied.
 */
import { connect, type JetStreamManager, type NatsConnection } from 'nats';
import { SAGA_CONSUMERS } from './stack.js';

/** How often the consumers' state is asked for, and how long the same state may stay unapplied. */
const POLL_MS = 50;
const STUCK_MS = 30_000;

export class SagaDrain {
  private constructor(
    private readonly nc: NatsConnection,
    private readonly jsm: JetStreamManager,
    private readonly stream: string,
  ) {}

  static async open(natsUrl: string, prefix: string): Promise<SagaDrain> {
    const nc = await connect({ servers: natsUrl, name: `${prefix}bench-drain` });
    return new SagaDrain(nc, await nc.jetstreamManager(), `${prefix}_BENCHFLOOR`);
  }

  /**
   * Waits until both consumers have nothing pending or unacknowledged, twice in a row with the
   * same delivered sequence (a message published in between would have moved it); resolves with
   * the milliseconds waited. Fails when their state stays the same with messages left for 30 s.
   */
  async until(): Promise<number> {
    const t0 = Date.now();
    let last = '';
    let movedAt = Date.now();
    for (;;) {
      const infos = await Promise.all(SAGA_CONSUMERS.map((c) => this.jsm.consumers.info(this.stream, `saga_${c}`)));
      const left = infos.reduce((n, i) => n + i.num_pending + i.num_ack_pending, 0);
      const state = infos.map((i) => `${i.delivered.stream_seq}/${i.ack_floor.stream_seq}`).join(',');
      if (left === 0 && state === last) return Date.now() - t0;
      if (state !== last) {
        last = state;
        movedAt = Date.now();
      } else if (Date.now() - movedAt > STUCK_MS) {
        throw new Error(`the saga floor's consumers stopped with ${left} messages unapplied (${state}); see their output`);
      }
      await new Promise((r) => setTimeout(r, POLL_MS));
    }
  }

  async close(): Promise<void> {
    await this.nc.close().catch(() => undefined);
  }
}
