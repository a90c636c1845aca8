/**
 * The service half of the benchmark's floors (the HTTP half is bench/floor-server.ts, in its own
 * process like the gateway; see there why). Three responders in one queue group, with the same
 * tools the services use: the `nats` package and a pg.Pool of 10 connections (PG_POOL_MAX's
 * default, same options as packages/shared/src/db/pool.ts):
 *
 * - echo:    answers the request's bytes.
 * - pg:      ONE indexed SELECT by primary key on a small table; answers the row.
 * - page:    ONE indexed SELECT of 100 consecutive rows (a range of the primary key); answers them:
 *            the least a page of 100 resources can cost (an inventory of 100), with no resource
 *            built, no token checked and no JSON:API document rendered.
 * - durable: ONE transaction (UPDATE one row, INSERT one row, COMMIT), then a JetStream publish
 *            with a message id (as the outbox does) awaiting its PubAck; then answers. The least a
 *            durable chest opening can cost: consume, record, hand the grant to JetStream.
 * - saga:    the opening's own shape at its least (docs/design.md §2): ONE statement consuming `n`
 *            rows and writing `n` outbox rows (the opening writes its whole transaction in one
 *            statement too), then each message published at once from memory awaiting its PubAck
 *            (`Nats-Msg-Id` = the outbox row's id), then answers; the rows published are marked so
 *            in one asynchronously committed UPDATE every 25 ms, as the services' outbox relay
 *            does. Two pull consumers in processes of their own (bench/floor-consumer.ts) apply
 *            the messages; the answer does not wait for them (the least the design allows: reads
 *            may merge pending grants instead), the bench counts the run until they drained.
 *
 * Its tables live in the schema `bench_floor` of the bench's throwaway database, its stream is
 * `<NATS_PREFIX>_BENCHFLOOR` (subjects `<NATS_PREFIX>.benchfloor.>`); both go when the bench
 * drops its database and deletes its prefix's streams.
 */
import { randomUUID } from 'node:crypto';
import { connect, RetentionPolicy, StorageType, type Msg } from 'nats';
import pg from 'pg';

const prefix = process.env.NATS_PREFIX ?? '';
const at = (s: string) => (prefix ? `${prefix}.${s}` : s);
const ROWS = Number(process.env.BENCH_FLOOR_ROWS ?? 1000);
const SCHEMA = 'bench_floor';
const databaseUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

await setUpTables();
const pool = new pg.Pool({
  connectionString: databaseUrl,
  max: Number(process.env.PG_POOL_MAX ?? 10),
  options: `-c search_path=${SCHEMA}`,
  connectionTimeoutMillis: 5000,
  idleTimeoutMillis: 30000,
});
pool.on('error', () => undefined);

// The services' connection options (packages/shared/src/runtime/service.ts).
const nc = await connect({ servers: process.env.NATS_URL ?? 'nats://127.0.0.1:4222', name: `${prefix}bench-floor-responder`, noAsyncTraces: true });
const jsm = await nc.jetstreamManager();
const streamName = prefix ? `${prefix}_BENCHFLOOR` : 'BENCHFLOOR';
await jsm.streams.add({
  name: streamName,
  subjects: [at('benchfloor.>')],
  // As the grants stream (packages/shared/src/messaging/stream.ts): on disk, deduplicated by id.
  storage: StorageType.File,
  retention: RetentionPolicy.Limits,
  max_age: 60 * 60 * 1e9,
  duplicate_window: 2 * 60 * 1e9,
  num_replicas: 1,
});
const js = nc.jetstream();
const encoder = new TextEncoder();

const fail = (msg: Msg, err: unknown) => msg.respond(encoder.encode(JSON.stringify({ error: err instanceof Error ? err.message : String(err) })));
const idOf = (msg: Msg) => (JSON.parse(new TextDecoder().decode(msg.data)) as { id: number }).id;

async function pgFloor(msg: Msg) {
  try {
    const r = await pool.query('SELECT id, name, attributes, updated_at FROM floor_rows WHERE id = $1', [idOf(msg)]);
    msg.respond(encoder.encode(JSON.stringify(r.rows[0] ?? null)));
  } catch (err) {
    fail(msg, err);
  }
}

/** A page of 100 rows from the request's id (wrapping round the table). */
async function pageFloor(msg: Msg) {
  try {
    const from = ((idOf(msg) - 1) % Math.max(1, ROWS - 100)) + 1;
    const r = await pool.query('SELECT id, name, attributes, counter, updated_at FROM floor_rows WHERE id >= $1 AND id < $1 + 100 ORDER BY id', [
      from,
    ]);
    msg.respond(encoder.encode(JSON.stringify(r.rows)));
  } catch (err) {
    fail(msg, err);
  }
}

async function durableFloor(msg: Msg) {
  try {
    const id = idOf(msg);
    const eventId = randomUUID();
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      await client.query('UPDATE floor_rows SET counter = counter + 1, updated_at = now() WHERE id = $1', [id]);
      await client.query('INSERT INTO floor_events (id, row_id, body) VALUES ($1, $2, $3)', [eventId, id, { row: id, at: Date.now() }]);
      await client.query('COMMIT');
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    } finally {
      client.release();
    }
    const ack = await js.publish(at('benchfloor.events'), encoder.encode(JSON.stringify({ eventId, id })), { msgID: eventId });
    msg.respond(encoder.encode(JSON.stringify({ eventId, seq: ack.seq })));
  } catch (err) {
    fail(msg, err);
  }
}

/** Rows of the saga floor published and not yet marked so: one UPDATE for all of them every MARK_EVERY_MS. */
const MARK_EVERY_MS = 25;
let marks: string[] = [];
const markTimer = setInterval(() => {
  if (!marks.length) return;
  const ids = marks;
  marks = [];
  pool
    .query(
      `WITH async AS MATERIALIZED (SELECT set_config('synchronous_commit', 'off', true))
       UPDATE saga_outbox SET published_at = now() FROM async WHERE id = ANY($1::uuid[]) AND published_at IS NULL`,
      [ids],
    )
    .catch(() => undefined);
}, MARK_EVERY_MS);

/** `n` consecutive row ids from the request's (wrapping round the table), as `n` chests of one request. */
const rowsFrom = (id: number, n: number) => Array.from({ length: n }, (_, k) => ((id - 1 + k) % ROWS) + 1);

async function sagaFloor(msg: Msg) {
  try {
    const { id, n = 1 } = JSON.parse(new TextDecoder().decode(msg.data)) as { id: number; n?: number };
    const rows = rowsFrom(id, n);
    const ids = rows.map(() => randomUUID());
    const bodies = rows.map((row, k) => JSON.stringify({ id: ids[k], row }));
    // One statement, one implicit transaction: the rows consumed and the outbox rows written.
    await pool.query(
      `WITH consumed AS (UPDATE floor_rows SET counter = counter + 1, updated_at = now() WHERE id = ANY($1::int[]) RETURNING id)
       INSERT INTO saga_outbox (id, row_id, body) SELECT * FROM unnest($2::uuid[], $1::int[], $3::jsonb[]) WHERE (SELECT count(*) FROM consumed) > 0`,
      [rows, ids, bodies],
    );
    const acks = await Promise.all(ids.map((eventId, k) => js.publish(at('benchfloor.saga'), encoder.encode(bodies[k]!), { msgID: eventId })));
    marks.push(...ids);
    msg.respond(encoder.encode(JSON.stringify({ ids, seq: acks[acks.length - 1]!.seq })));
  } catch (err) {
    fail(msg, err);
  }
}

const queue = 'bench-floor';
nc.subscribe(at('bench.floor.echo'), { queue, callback: (_err, msg) => msg.respond(msg.data) });
nc.subscribe(at('bench.floor.pg'), { queue, callback: (_err, msg) => void pgFloor(msg) });
nc.subscribe(at('bench.floor.page'), { queue, callback: (_err, msg) => void pageFloor(msg) });
nc.subscribe(at('bench.floor.durable'), { queue, callback: (_err, msg) => void durableFloor(msg) });
nc.subscribe(at('bench.floor.saga'), { queue, callback: (_err, msg) => void sagaFloor(msg) });
await nc.flush();
console.log(`floor responders ready (${ROWS} rows in ${SCHEMA}, stream ${streamName})`);

/** The floor's small tables, in its own schema of the bench database. */
async function setUpTables() {
  const c = new pg.Client({ connectionString: databaseUrl });
  await c.connect();
  try {
    await c.query(`CREATE SCHEMA IF NOT EXISTS ${SCHEMA}`);
    await c.query(`SET search_path = ${SCHEMA}`);
    await c.query(`CREATE TABLE IF NOT EXISTS floor_rows (
      id integer PRIMARY KEY, name text NOT NULL, attributes jsonb NOT NULL,
      counter bigint NOT NULL DEFAULT 0, updated_at timestamptz NOT NULL DEFAULT now())`);
    await c.query(`CREATE TABLE IF NOT EXISTS floor_events (
      id uuid PRIMARY KEY, row_id integer NOT NULL, body jsonb NOT NULL, created_at timestamptz NOT NULL DEFAULT now())`);
    // The saga floor's outbox, and the tables its two consumers apply the messages to (one row each).
    await c.query(`CREATE TABLE IF NOT EXISTS saga_outbox (
      id uuid PRIMARY KEY, row_id integer NOT NULL, body jsonb NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(), published_at timestamptz)`);
    for (const t of ['saga_items', 'saga_experience'])
      await c.query(`CREATE TABLE IF NOT EXISTS ${t} (id uuid PRIMARY KEY, row_id integer NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`);
    await c.query(
      `INSERT INTO floor_rows (id, name, attributes)
       SELECT i, 'row ' || i, jsonb_build_object('rarity', 'common', 'images', jsonb_build_array('https://assets.example.com/' || i || '.png'))
         FROM generate_series(1, $1::int) i ON CONFLICT (id) DO NOTHING`,
      [ROWS],
    );
    await c.query('ANALYZE floor_rows');
  } finally {
    await c.end();
  }
}

const stop = async () => {
  clearInterval(markTimer);
  await nc.drain().catch(() => undefined);
  await pool.end().catch(() => undefined);
  process.exit(0);
};
process.once('SIGTERM', () => void stop());
process.once('SIGINT', () => void stop());
