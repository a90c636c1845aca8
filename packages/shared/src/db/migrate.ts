import { createHash } from 'node:crypto';
import { runner } from 'node-pg-migrate';

const LOCK_BUSY = 'Another migration is already running';
const LOCK_WAIT_MS = 60_000;

/**
 * node-pg-migrate takes its advisory lock with pg_try_advisory_lock and fails at once when it is
 * taken. One lock id per schema lets different services migrate side by side, and a replica
 * that finds its own schema's lock taken waits (bounded) and retries instead of crashing.
 */
function lockValueFor(schema: string, table: string): number {
  // 48 bits keep the id an exact JavaScript integer.
  return Number.parseInt(createHash('sha256').update(`ccs-migrate:${schema}:${table}`).digest('hex').slice(0, 12), 16);
}

/**
 * Applies a service's SQL migrations (`migrations/NNNN_name.sql`, with `-- Up Migration` and
 * `-- Down Migration` sections) to its own schema, recording them in that schema. Concurrent
 * replicas are serialised by an advisory lock per schema (the later one waits, then finds
 * nothing left to do).
 */
export async function migrateSchema(databaseUrl: string, schema: string, dir: string, table = 'schema_migrations'): Promise<string[]> {
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    try {
      const applied = await runner({
        databaseUrl,
        dir,
        schema,
        createSchema: true,
        migrationsTable: table,
        direction: 'up',
        count: Infinity,
        checkOrder: true,
        singleTransaction: true,
        lockValue: lockValueFor(schema, table),
        log: () => undefined,
      });
      return applied.map((m) => m.name);
    } catch (err) {
      if (!(err instanceof Error) || !err.message.includes(LOCK_BUSY) || Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 200 + Math.random() * 300));
    }
  }
}
