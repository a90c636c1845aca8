/**
 * The HTTP half of the benchmark's floors: bare Fastify routes, each making ONE NATS request-reply
 * to a responder in bench/floor-responder.ts, and nothing else (no apikey, no JWT, no validation,
 * no JSON:API rendering). Each scenario is reported as a ratio to the floor of its kind:
 *
 *   GET /echo     → bench.floor.echo     echo handler                       (catalog list)
 *   GET /pg       → bench.floor.pg       one SELECT by primary key          (reads, credit)
 *   GET /page     → bench.floor.page     one SELECT of 100 rows             (a reference for pages of 100)
 *   GET /durable  → bench.floor.durable  one UPDATE + INSERT transaction,
 *                                        then a JetStream publish awaiting its PubAck (writes)
 *   GET /saga     → bench.floor.saga       one statement consuming a row and writing its outbox row,
 *                                        the message published awaiting its PubAck, two consumers
 *                                        applying it (the opening's saga at its least)
 *   GET /saga10   → bench.floor.saga       the same for 10 rows and 10 messages (the batch of 10)
 *
 * Why two processes (this one and floor-responder.ts) rather than one: the real stack runs the
 * gateway and each service as separate Node processes, so an HTTP request costs two event loops
 * and two JSON codecs on two cores. A floor serving HTTP and answering NATS in the same process
 * would share one event loop, pay no cross-process scheduling and look better than anything the
 * stack can ever do on the same machine; the split makes the comparison fair (same process shape,
 * same CPU contention between front and responder). Only one floor is measured at a time.
 */
import Fastify from 'fastify';
import { connect } from 'nats';

const port = Number(process.env.PORT ?? 3999);
const prefix = process.env.NATS_PREFIX ?? '';
const subject = (name: string) => `${prefix ? prefix + '.' : ''}bench.floor.${name}`;
/** Rows of the floor tables (floor-responder.ts creates as many). */
const ROWS = Number(process.env.BENCH_FLOOR_ROWS ?? 1000);

// The connection options of the gateway and the services (noAsyncTraces: no stack capture per
// request): the floor is the cheapest the same tools allow.
const nc = await connect({ servers: process.env.NATS_URL ?? 'nats://127.0.0.1:4222', name: `${prefix}bench-floor-front`, noAsyncTraces: true });
const encoder = new TextEncoder();
const echoPayload = encoder.encode(JSON.stringify({ ping: true }));
// Consecutive ids: like openings of distinct chests, two concurrent durable requests never wait
// for each other's row lock; reads walk the table the same way.
let next = 0;
const nextId = () => (next = (next % ROWS) + 1);

const app = Fastify();

/** Forwards one request to a responder; a responder's `{error}` answer is a 500, so it shows as non-2xx. */
async function forward(name: string, payload: Uint8Array, reply: import('fastify').FastifyReply) {
  const msg = await nc.request(subject(name), payload, { timeout: 5000 });
  const body = Buffer.from(msg.data);
  const failed = body.length > 9 && body.subarray(0, 9).toString() === '{"error":';
  return reply
    .code(failed ? 500 : 200)
    .type('application/json')
    .send(body);
}

app.get('/echo', (_req, reply) => forward('echo', echoPayload, reply));
app.get('/pg', (_req, reply) => forward('pg', encoder.encode(JSON.stringify({ id: nextId() })), reply));
app.get('/page', (_req, reply) => forward('page', encoder.encode(JSON.stringify({ id: nextId() })), reply));
app.get('/durable', (_req, reply) => forward('durable', encoder.encode(JSON.stringify({ id: nextId() })), reply));
app.get('/saga', (_req, reply) => forward('saga', encoder.encode(JSON.stringify({ id: nextId(), n: 1 })), reply));
// Ten consecutive rows, the next request's ten after them: concurrent batches never share a row.
app.get('/saga10', (_req, reply) => {
  const id = nextId();
  next = ((id + 9 - 1) % ROWS) + 1;
  return forward('saga', encoder.encode(JSON.stringify({ id, n: 10 })), reply);
});

await app.listen({ port, host: '127.0.0.1' });
console.log(`floor front ready on ${port}`);
const stop = async () => {
  await app.close();
  await nc.drain();
  process.exit(0);
};
process.once('SIGTERM', () => void stop());
process.once('SIGINT', () => void stop());
