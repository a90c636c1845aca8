import { runner } from 'node-pg-migrate';

/**
 * Applies a service's SQL migrations (`migrations/NNNN_name.sql`, with `-- Up Migration` and
 * `-- Down Migration` sections) to its own schema, recording them in that schema. Concurrent
 * replicas are serialised by node-pg-migrate's advisory lock.
 */
export async function migrateSchema(databaseUrl: string, schema: string, dir: string, table = "schema_migrations"): Promise<string[]> {
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
    log: () => undefined,
  });
  return applied.map((m) => m.name);
}
