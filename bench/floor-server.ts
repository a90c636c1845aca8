/**
 * The benchmark's floor: a bare Fastify route that makes one NATS request-reply to an echo
 * handler, and nothing else. Every scenario is reported as a ratio to this path.
 */
import Fastify from 'fastify';
import { connect } from 'nats';

const port = Number(process.env.PORT ?? 3999);
const subject = `${process.env.NATS_PREFIX ? process.env.NATS_PREFIX + '.' : ''}bench.echo`;
const nc = await connect({ servers: process.env.NATS_URL ?? 'nats://127.0.0.1:4222' });
nc.subscribe(subject, { queue: 'bench-echo', callback: (_err, msg) => msg.respond(msg.data) });

const app = Fastify();
const payload = new TextEncoder().encode(JSON.stringify({ ping: true }));
app.get('/echo', async (_req, reply) => {
  const msg = await nc.request(subject, payload, { timeout: 5000 });
  return reply.type('application/json').send(Buffer.from(msg.data));
});
await app.listen({ port, host: '127.0.0.1' });
console.log(`floor ready on ${port}`);
const stop = async () => {
  await app.close();
  await nc.drain();
  process.exit(0);
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
