/**
 * One of the saga floor's two consumers (bench/floor-responder.ts publishes the messages), each in
 * a process of its own as collections and players are: `SAGA_CONSUMER=items` or `experience`.
 * Batched as well as a consumer can be: a durable pull consumer (256 messages a pull, as the
 * services' consumers), every message that has arrived applied in ONE set-based statement (one
 * row per message, `unnest`, the message id its key so a second delivery changes nothing: the
 * design's "applied once"), then ONE ack for the batch (ack policy "all": acking the last message
 * acks the ones before it). The bench counts a saga floor's run until both consumers drained.
 */
import { AckPolicy, connect, DeliverPolicy, type JsMsg } from 'nats';
import pg from 'pg';

const which = process.env.SAGA_CONSUMER;
if (which !== 'items' && which !== 'experience') throw new Error(`SAGA_CONSUMER must be items or experience, not ${String(which)}`);
const prefix = process.env.NATS_PREFIX ?? '';
const at = (s: string) => (prefix ? `${prefix}.${s}` : s);
const streamName = prefix ? `${prefix}_BENCHFLOOR` : 'BENCHFLOOR';
/** The durable's name: the bench asks JetStream for its pending messages to know when it drained. */
const durable = `saga_${which}`;
const table = `saga_${which}`;
/** The most messages one statement applies (the pull's own size). */
const BATCH = 256;

const pool = new pg.Pool({
  connectionString: process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
  max: Number(process.env.PG_POOL_MAX ?? 10),
  options: '-c search_path=bench_floor',
  connectionTimeoutMillis: 5000,
  idleTimeoutMillis: 30000,
});
pool.on('error', () => undefined);

const nc = await connect({ servers: process.env.NATS_URL ?? 'nats://127.0.0.1:4222', name: `${prefix}bench-floor-${durable}`, noAsyncTraces: true });
const jsm = await nc.jetstreamManager();
// The responder makes the stream: wait for it (bounded), then make this consumer's durable.
for (let tries = 0; ; tries++) {
  try {
    await jsm.consumers.add(streamName, {
      durable_name: durable,
      filter_subject: at('benchfloor.saga'),
      ack_policy: AckPolicy.All,
      deliver_policy: DeliverPolicy.All,
      ack_wait: 4_000 * 1e6,
      max_ack_pending: 1000,
    });
    break;
  } catch (err) {
    if (tries >= 240) throw err;
    await new Promise((r) => setTimeout(r, 250));
  }
}
const consumer = await nc.jetstream().consumers.get(streamName, durable);

const buffer: JsMsg[] = [];
let wake: (() => void) | undefined;
const messages = await consumer.consume({
  max_messages: BATCH,
  expires: 5_000,
  callback: (m) => {
    buffer.push(m);
    wake?.();
  },
});
const decoder = new TextDecoder();

/**
 * Applies every message that has arrived, a statement at a time. A failed statement is tried again
 * before anything later is applied: with ack policy "all", acking a later message would ack the
 * failed ones too.
 */
async function applyLoop(): Promise<void> {
  for (;;) {
    if (!buffer.length) {
      await new Promise<void>((r) => (wake = r));
      wake = undefined;
      continue;
    }
    const batch = buffer.splice(0, BATCH);
    const ids: string[] = [];
    const rows: number[] = [];
    for (const m of batch) {
      const body = JSON.parse(decoder.decode(m.data)) as { id: string; row: number };
      ids.push(body.id);
      rows.push(body.row);
    }
    for (;;) {
      try {
        await pool.query(`INSERT INTO ${table} (id, row_id) SELECT * FROM unnest($1::uuid[], $2::int[]) ON CONFLICT (id) DO NOTHING`, [ids, rows]);
        break;
      } catch (err) {
        console.error(`[${durable}] a batch of ${batch.length} failed, trying again in 100 ms: ${String(err)}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    batch[batch.length - 1]!.ack();
  }
}
void applyLoop();
console.log(`saga floor consumer ${durable} ready`);

const stop = async () => {
  await messages.close().catch(() => undefined);
  await nc.drain().catch(() => undefined);
  await pool.end().catch(() => undefined);
  process.exit(0);
};
process.once('SIGTERM', () => void stop());
process.once('SIGINT', () => void stop());
