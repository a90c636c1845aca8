import { createHash, randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { migrateService, type ServiceDefinition } from '../runtime/service.js';
import type { InfraUrls } from './infra.js';

/** What a migrated test database is made of: the services' schemas and migrations, in order. */
export type Migrations = Pick<ServiceDefinition, 'schema' | 'migrationsDir'>;

/** A test file's own database; `drop` removes it. */
export interface TestDatabase {
  url: string;
  drop(): Promise<void>;
}

const MESSAGING_MIGRATIONS = fileURLToPath(new URL('../../migrations/messaging', import.meta.url));
const TEMPLATE_PREFIX = 'ccs_tmpl_';
/** Templates of other migration sets (another branch, an older run) are dropped once this old. */
const STALE_TEMPLATE_MS = 24 * 3_600_000;

/**
 * The template's name: a digest of the schemas, their order and every migration file's name and
 * text (the shared messaging ones included), so a changed migration makes a new template.
 */
export function templateName(services: Migrations[]): string {
  const h = createHash('sha256');
  const add = (dir: string) => {
    for (const f of readdirSync(dir).sort())
      h.update(`${f}\0`)
        .update(readFileSync(join(dir, f)))
        .update('\0');
  };
  add(MESSAGING_MIGRATIONS);
  for (const s of services) {
    h.update(`schema ${s.schema}\0`);
    add(s.migrationsDir);
  }
  return TEMPLATE_PREFIX + h.digest('hex').slice(0, 16);
}

async function withAdmin<T>(infra: InfraUrls, use: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: infra.databaseUrl });
  await c.connect();
  try {
    return await use(c);
  } finally {
    await c.end();
  }
}

function databaseUrl(infra: InfraUrls, name: string): string {
  const url = new URL(infra.databaseUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

/**
 * Makes sure the template database exists: the first process to get here (an advisory lock per
 * template serialises workers and concurrent runs) migrates a new database and renames it to the
 * template's name; the others wait for the lock and find it there.
 */
async function ensureTemplate(infra: InfraUrls, name: string, services: Migrations[]): Promise<void> {
  await withAdmin(infra, async (admin) => {
    await admin.query('SELECT pg_advisory_lock(hashtext($1))', [name]);
    try {
      const found = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
      if (found.rowCount) return;
      const building = `${name}_build`;
      await admin.query(`DROP DATABASE IF EXISTS ${building} WITH (FORCE)`);
      await admin.query(`CREATE DATABASE ${building}`);
      for (const s of services) await migrateService(s, databaseUrl(infra, building));
      await admin.query(`ALTER DATABASE ${building} RENAME TO ${name}`);
      await admin.query(`COMMENT ON DATABASE ${name} IS '${Date.now()}'`);
      await dropStaleTemplates(admin, name);
    } finally {
      await admin.query('SELECT pg_advisory_unlock(hashtext($1))', [name]);
    }
  });
}

/** Drops the templates of other migration sets that are a day old (their comment holds when they were made). */
async function dropStaleTemplates(admin: pg.Client, keep: string): Promise<void> {
  const r = await admin.query<{ datname: string; made: string | null }>(
    `SELECT d.datname, shobj_description(d.oid, 'pg_database') AS made FROM pg_database d WHERE d.datname LIKE $1 AND d.datname <> $2`,
    [`${TEMPLATE_PREFIX}%`, keep],
  );
  for (const row of r.rows) {
    const made = Number(row.made);
    if (!Number.isFinite(made) || Date.now() - made < STALE_TEMPLATE_MS) continue;
    await admin.query(`DROP DATABASE IF EXISTS ${row.datname}`).catch(() => undefined);
  }
}

const templates = new Map<string, Promise<void>>();

/**
 * A fresh database with every schema of `services` migrated, as their services would find it
 * after their first start: a copy (`CREATE DATABASE … TEMPLATE`) of a template migrated once per
 * set of migrations, instead of running every migration again for each test file, with
 * `synchronous_commit` off for its sessions. `drop` removes the copy.
 */
export async function createMigratedDatabase(infra: InfraUrls, services: Migrations[]): Promise<TestDatabase> {
  const template = templateName(services);
  const key = `${infra.databaseUrl} ${template}`;
  let ready = templates.get(key);
  if (!ready) {
    ready = ensureTemplate(infra, template, services);
    templates.set(key, ready);
    ready.catch(() => templates.delete(key));
  }
  await ready;
  const name = `ccs_test_${randomBytes(6).toString('hex')}`;
  await withAdmin(infra, async (admin) => {
    try {
      await admin.query(`CREATE DATABASE ${name} TEMPLATE ${template}`);
    } catch (err) {
      // Dropped meanwhile (another run pruned it): build it again once.
      if ((err as { code?: string }).code !== '3D000') throw err;
      templates.delete(key);
      await ensureTemplate(infra, template, services);
      await admin.query(`CREATE DATABASE ${name} TEMPLATE ${template}`);
    }
    // A test's commits need not wait for the disk: nothing here survives a crash of this shared
    // Postgres anyway (the chaos suite, which crashes its own, keeps the default). Every commit
    // is still atomic and isolated as in production; only its flush is deferred.
    await admin.query(`ALTER DATABASE ${name} SET synchronous_commit = off`);
  });
  return {
    url: databaseUrl(infra, name),
    drop: () => withAdmin(infra, (c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).then(() => undefined)),
  };
}
