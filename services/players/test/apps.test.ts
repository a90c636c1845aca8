import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AdminCreateApp, AdminLoadContent, Bus, readContentFile, ResolveApiKey, startService } from '@ccs/shared';
import { contentFactory, createTestDatabase, deleteTestStreams, isolatedConfig, testInfra } from '@ccs/shared/testing';
import { PlayersConfigSchema } from '../src/config.js';
import { playersService } from '../src/service.js';
import { registeredPlayer, startPlayersTier, type PlayersTier } from './support/players-tier.js';

const ctx = () => ({ requestId: randomUUID() });

/**
 * Service tier: players alone, called over its own subjects as the admin tool and the gateway
 * call it. (The token and login cases through the gateway and the admin command line are in
 * test/e2e/players/apps.test.ts.)
 */
describe('apps, API keys and signing keys', () => {
  let tier: PlayersTier;
  let apiKey: string;
  beforeAll(async () => {
    ({ tier, apiKey } = await startPlayersTier());
  });
  afterAll(async () => tier?.close());

  const pool = () => tier.service.deps.pool;
  const createApp = (name: string) => tier.bus.request(AdminCreateApp, { name }, ctx());

  it('creates the demo app once, with CHESTS_DEMO_API_KEY as its key, and announces its content', async () => {
    expect(await tier.bus.request(ResolveApiKey, { apiKey }, ctx())).toMatchObject({ keyKind: 'publishable' });
    await tier.stopService();
    await tier.startService();
    const { rows: demos } = await pool().query<{ n: number }>('SELECT count(*)::int AS n FROM players.apps WHERE is_demo');
    expect(demos[0]!.n).toBe(1);
    const { rows } = await pool().query(`SELECT payload FROM players.outbox WHERE subject = 'grants.apps.content'`);
    const demo = await tier.bus.request(ResolveApiKey, { apiKey }, ctx());
    expect(rows.map((r) => r.payload.appId)).toEqual([demo.appId]);
    expect(rows[0].payload.content.currencies.map((c: { code: string }) => c.code)).toEqual(readContentFile().currencies.map((c) => c.code));
    expect(rows[0].payload.version).toBe(1);
  });

  it('creates further apps through the admin endpoint, each with a publishable and a secret key', async () => {
    const other = await createApp('Second game');
    expect(other.contentVersion).toBe(1);
    expect(await tier.bus.request(ResolveApiKey, { apiKey: other.publishableKey }, ctx())).toEqual({ appId: other.appId, keyKind: 'publishable' });
    expect(await tier.bus.request(ResolveApiKey, { apiKey: other.secretKey }, ctx())).toEqual({ appId: other.appId, keyKind: 'secret' });
    await expect(tier.bus.request(ResolveApiKey, { apiKey: 'pk_unknown' }, ctx())).rejects.toMatchObject({ kind: 'not_found' });
    const { rows } = await pool().query('SELECT key_hash FROM players.api_keys');
    expect(rows.map((r) => r.key_hash).join()).not.toContain(other.publishableKey);
  });

  it('loads a new content version whose player rules apply to the next registrations', async () => {
    const other = await createApp('Content game');
    const content = contentFactory((c) => {
      c.players.initial_currency = { coins: 42 };
      c.players.access_token_ttl_seconds = 300;
    });
    const { version } = await tier.bus.request(AdminLoadContent, { appId: other.appId, content }, ctx());
    expect(version).toBe(2);
    const player = await registeredPlayer(tier, other.appId);
    expect(player.grants?.initialCurrency).toEqual({ coins: 42 });
    expect(player.expiresIn).toBe(300);
    await expect(tier.bus.request(AdminLoadContent, { appId: randomUUID(), content }, ctx())).rejects.toMatchObject({ kind: 'not_found' });
  });
});
describe('demo app without CHESTS_DEMO_API_KEY', () => {
  it('generates a random key, logs it once, keeps the one demo app across restarts, and adds a key set later', async () => {
    const infra = await testInfra();
    const db = await createTestDatabase(infra);
    const config = PlayersConfigSchema.parse({ ...isolatedConfig(infra, db.url), LOG_LEVEL: 'info' });
    const lines: string[] = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(line) });
    try {
      const first = await startService(playersService, config, logger);
      await first.stop();
      const second = await startService(playersService, config, logger);
      try {
        const announcements = lines.filter((l) => l.includes('demo app created; API key: '));
        expect(announcements).toHaveLength(1);
        const key = /API key: (pk_[\w-]+)/.exec(announcements[0]!)?.[1];
        const bus = new Bus(second.deps.nc, config.NATS_PREFIX, 2000);
        const demo = await bus.request(ResolveApiKey, { apiKey: key! }, ctx());
        expect(demo).toMatchObject({ keyKind: 'publishable' });
        // Its secret key (the studio console's sign-in) is logged once too.
        const secrets = lines.filter((l) => l.includes('demo app secret key'));
        expect(secrets).toHaveLength(1);
        const secret = /: (sk_[\w-]+)/.exec(secrets[0]!)?.[1];
        expect(await bus.request(ResolveApiKey, { apiKey: secret! }, ctx())).toEqual({ ...demo, keyKind: 'secret' });
        const { rows } = await second.deps.pool.query('SELECT count(*)::int AS n FROM apps');
        expect(rows[0].n).toBe(1);
      } finally {
        await second.stop();
      }
      // Setting CHESTS_DEMO_API_KEY later adds it to the same demo app; the generated key keeps working.
      const chosen = `demo_${randomUUID().replace(/-/g, '')}`;
      const chosenSecret = `demo_secret_${randomUUID().replace(/-/g, '')}`;
      const third = await startService(playersService, { ...config, CHESTS_DEMO_API_KEY: chosen, CHESTS_DEMO_SECRET_KEY: chosenSecret }, logger);
      try {
        const bus = new Bus(third.deps.nc, config.NATS_PREFIX, 2000);
        const byChosen = await bus.request(ResolveApiKey, { apiKey: chosen }, ctx());
        expect(await bus.request(ResolveApiKey, { apiKey: chosenSecret }, ctx())).toEqual({ ...byChosen, keyKind: 'secret' });
        const generated = /API key: (pk_[\w-]+)/.exec(lines.find((l) => l.includes('API key: '))!)![1]!;
        expect(await bus.request(ResolveApiKey, { apiKey: generated }, ctx())).toEqual(byChosen);
        const { rows } = await third.deps.pool.query('SELECT count(*)::int AS n FROM apps');
        expect(rows[0].n).toBe(1);
      } finally {
        await third.stop();
      }
    } finally {
      await deleteTestStreams(config.NATS_URL, config.NATS_PREFIX);
      await db.drop();
    }
  });
});
