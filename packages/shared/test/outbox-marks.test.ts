import { randomBytes, randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { connect, type NatsConnection } from 'nats';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  createLogger,
  createPool,
  defineEvent,
  ensureGrantsStream,
  grantsStream,
  insertOutboxMessage,
  markOutboxPublished,
  migrateSchema,
  OutboxRelay,
  outboxMessage,
  releaseOutboxClaims,
  type Pool,
} from '../src/index.js';
import { createTestDatabase, deleteTestStreams, testInfra } from '../src/testing/index.js';

// The relay marks published rows with an asynchronous commit (outbox-repo.ts, markOutboxPublished):
// a mark lost to a Postgres crash only makes a later pass publish the row again, which the stream
// drops by its Nats-Msg-Id. Real Postgres and NATS.

const Marked = defineEvent('grants.test.marked', z.object({ n: z.number() }));
const MESSAGING = fileURLToPath(new URL('../migrations/messaging', import.meta.url));

describe('outbox marks', () => {
  let db: { url: string; drop(): Promise<void> };
  let admin: pg.Client;
  let pool: Pool;
  let nc: NatsConnection;
  let natsUrl: string;
  const prefix = `marks${randomBytes(4).toString('hex')}`;

  const message = (n: number) => outboxMessage(Marked, randomUUID(), { n }, { requestId: `marks-${n}` });
  const publishedAt = async (id: string) =>
    (await admin.query<{ at: Date | null }>('SELECT published_at AS at FROM s.outbox WHERE id = $1', [id])).rows[0]!.at;
  const streamMessages = async () => (await (await nc.jetstreamManager()).streams.info(grantsStream(prefix))).state.messages;

  beforeAll(async () => {
    const infra = await testInfra();
    natsUrl = infra.natsUrl;
    db = await createTestDatabase(infra);
    await migrateSchema(db.url, 's', MESSAGING, 'messaging_migrations');
    admin = new pg.Client({ connectionString: db.url });
    await admin.connect();
    // What synchronous_commit each transaction that updates an outbox row commits with: a deferred
    // trigger runs at COMMIT, when the transaction's own setting is still in force.
    await admin.query(`
      CREATE TABLE s.commit_settings (n serial PRIMARY KEY, setting text NOT NULL);
      CREATE FUNCTION s.record_commit_setting() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN INSERT INTO s.commit_settings (setting) VALUES (current_setting('synchronous_commit')); RETURN NULL; END $$;
      CREATE CONSTRAINT TRIGGER record_commit_setting AFTER UPDATE ON s.outbox DEFERRABLE INITIALLY DEFERRED
        FOR EACH ROW EXECUTE FUNCTION s.record_commit_setting();`);
    // One connection: the statements below all run in the same session.
    pool = createPool(db.url, 's', 1);
    nc = await connect({ servers: natsUrl });
    await ensureGrantsStream(await nc.jetstreamManager(), prefix);
  });
  afterAll(async () => {
    await pool?.end();
    await admin?.end();
    await nc?.close();
    await deleteTestStreams(natsUrl, prefix);
    await db?.drop();
  });

  it('commits a mark asynchronously and leaves the session synchronous', async () => {
    const rows = [message(1), message(2)];
    for (const m of rows) await insertOutboxMessage(pool, m);
    const ids = rows.map((m) => m.id);
    // Another update of the same rows, in the ordinary way: committed synchronously.
    await releaseOutboxClaims(pool, ids);
    await markOutboxPublished(pool, ids);
    const settings = await admin.query<{ setting: string }>('SELECT setting FROM s.commit_settings ORDER BY n');
    expect(settings.rows.map((r) => r.setting)).toEqual(['on', 'on', 'off', 'off']);
    for (const id of ids) expect(await publishedAt(id)).toBeInstanceOf(Date);
    expect((await pool.query<{ v: string }>('SELECT current_setting($1) AS v', ['synchronous_commit'])).rows[0]!.v).toBe('on');
  });

  it('re-publishes a row whose mark was lost, and the stream keeps one copy', async () => {
    const relay = new OutboxRelay(pool, nc.jetstream(), prefix, createLogger('test', 'silent'));
    const before = await streamMessages();
    const m = message(3);
    await insertOutboxMessage(pool, m);
    await relay.flush();
    const first = await publishedAt(m.id);
    expect(first).toBeInstanceOf(Date);
    expect(await streamMessages()).toBe(before + 1);

    // The mark lost (a Postgres crash before its WAL was flushed): the row is unpublished again.
    await admin.query('UPDATE s.outbox SET published_at = NULL WHERE id = $1', [m.id]);
    expect(await relay.backlog()).toBe(1);
    await relay.flush();
    expect(await publishedAt(m.id)).toBeInstanceOf(Date);
    expect(await relay.backlog()).toBe(0);
    expect(await streamMessages()).toBe(before + 1);

    // A row published at once from memory is marked a moment later, its duplicate dropped too.
    const now = message(4);
    await insertOutboxMessage(pool, now);
    await relay.publishNow([now]);
    await relay.publishNow([now]);
    await relay.stop();
    expect(await publishedAt(now.id)).toBeInstanceOf(Date);
    expect(await streamMessages()).toBe(before + 2);
  });
});
