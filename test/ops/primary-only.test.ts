import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { BaseConfigSchema } from '@ccs/shared';
import { ChestsConfigSchema } from '../../services/chests/src/config.js';
import { CollectionsConfigSchema } from '../../services/collections/src/config.js';
import { EgressConfigSchema } from '../../services/egress/src/config.js';
import { GatewayConfigSchema } from '../../services/gateway/src/config.js';
import { PlayersConfigSchema } from '../../services/players/src/config.js';
import { StoreConfigSchema } from '../../services/store/src/config.js';
import { WalletConfigSchema } from '../../services/wallet/src/config.js';

// Reads never decide money from a replica (docs/deploy.md, "Which reads may go to a replica"):
// no read goes to one at all. Every Postgres connection a service opens is made from its one
// DATABASE_URL, which names the primary (through PgBouncer and HAProxy, or an operator's
// read-write service); there is no setting that could name a standby for some reads. A change
// that adds one (a READ_REPLICA_URL, a second pool, a connection from another URL) fails here and
// must say, in that section, why its reads feed no write.

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

const SCHEMAS: Record<string, z.ZodObject> = {
  base: BaseConfigSchema,
  players: PlayersConfigSchema,
  wallet: WalletConfigSchema,
  chests: ChestsConfigSchema,
  collections: CollectionsConfigSchema,
  egress: EgressConfigSchema,
  store: StoreConfigSchema,
  gateway: GatewayConfigSchema,
};

/** Every production source file: packages/, services/ and tools/ `src` trees, test support excluded. */
function productionSources(): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) {
        if (e.name !== 'node_modules' && e.name !== 'testing') walk(p);
      } else if (/\.tsx?$/.test(e.name) && !/\.test\.tsx?$/.test(e.name)) out.push(p);
    }
  };
  for (const top of ['packages', 'services', 'tools'])
    for (const e of readdirSync(path.join(ROOT, top), { withFileTypes: true }))
      if (e.isDirectory()) {
        const src = path.join(ROOT, top, e.name, 'src');
        if (readdirSync(path.join(ROOT, top, e.name)).includes('src')) walk(src);
      }
  return out;
}

const rel = (f: string) => path.relative(ROOT, f);

describe('reads never decide money from a replica: every connection goes to the primary', () => {
  it('no service has a setting for a second database (a replica, a reader endpoint): only DATABASE_URL', () => {
    const databaseish = /DATABASE|POSTGRES|^PG|REPLICA|STANDBY|READER|READ_ONLY/;
    for (const [name, schema] of Object.entries(SCHEMAS)) {
      const where = Object.keys(schema.shape).filter((k) => databaseish.test(k) && /(URL|URI|HOST|DSN)$/.test(k));
      expect(where, name).toEqual(['DATABASE_URL']);
    }
  });

  it('Postgres connections are opened in two places only, each from the URL it is handed', () => {
    const sources = productionSources();
    expect(sources.length).toBeGreaterThan(100);
    const opening = /new\s+(pg\.)?(Pool|Client)\s*\(|\brunner\(\s*\{/;
    const openers = sources.filter((f) => opening.test(readFileSync(f, 'utf8'))).map(rel);
    // createPool (every service's pool), the migrations (node-pg-migrate's runner), the simulation lock's session.
    expect(openers.sort()).toEqual([
      'packages/shared/src/db/migrate.ts',
      'packages/shared/src/db/pool.ts',
      'services/chests/src/simulation/app-lock.ts',
    ]);
    for (const f of openers) {
      const text = readFileSync(path.join(ROOT, f), 'utf8');
      for (const m of text.matchAll(/connectionString:\s*([\w.]+)|\brunner\(\s*\{\s*databaseUrl\b/g))
        expect(m[1] ?? 'databaseUrl', `${f}: a connection from something other than the URL it is handed`).toBe('databaseUrl');
    }
  });

  it('and every URL handed to them is the service configuration DATABASE_URL', () => {
    // The functions that take a database URL and open connections with it, and what they pass it on to.
    const takers = /\b(createPool|migrateService|migrateSchema|lockAppSimulation|new Simulations)\(\s*(?:def,\s*)?([\w.]+)(\s*:)?/g;
    const passed = new Map<string, string[]>();
    for (const f of productionSources()) {
      for (const m of readFileSync(f, 'utf8').matchAll(takers)) {
        const arg = m[2]!;
        // The definitions themselves (`createPool(databaseUrl: string`) are not calls.
        if (m[3]) continue;
        if (/^(databaseUrl|this\.databaseUrl)$/.test(arg) || arg === 'config.DATABASE_URL') {
          passed.set(rel(f), [...(passed.get(rel(f)) ?? []), `${m[1]}(${arg})`]);
          continue;
        }
        throw new Error(`${rel(f)}: ${m[0]}: a database URL other than the configuration's DATABASE_URL`);
      }
    }
    // The entry points hand over config.DATABASE_URL; the rest pass on the parameter they were given.
    const fromConfig = [...passed.values()].flat().filter((c) => c.endsWith('(config.DATABASE_URL)'));
    expect(fromConfig.sort()).toEqual(
      [
        'createPool(config.DATABASE_URL)', // connect-infra.ts: every service's pool
        'createPool(config.DATABASE_URL)', // service.ts: --migrate-only's probe
        'migrateService(config.DATABASE_URL)', // service.ts: the migrations at start
        'migrateService(config.DATABASE_URL)', // service.ts: --migrate-only
        'new Simulations(config.DATABASE_URL)', // chests: the simulation lock's session
      ].sort(),
    );
  });
});
