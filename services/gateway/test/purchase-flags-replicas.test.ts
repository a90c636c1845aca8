import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { connect, type NatsConnection } from 'nats';
import { AdminCreateApp, AdminLoadContent, Bus, readContentFile, type AppContent } from '@ccs/shared';
import { eventually, jsonApiHeaders, startStack, type TestStack } from '../../../test/support/stack.js';
import { expectJsonApi } from '../../../test/support/jsonapi-schema.js';
import { registerDeclaring } from '../../chests/test/support/compliance.js';
import type { Player } from '../../chests/test/support/chests.js';
import { buildApp } from '../src/app.js';
import { GatewayConfigSchema } from '../src/config.js';

const THIS_YEAR = new Date().getUTCFullYear();

// The catalog's per-player flags (meta.purchasable, from each gateway's memory of a player's
// purchase restrictions) with two gateway replicas on one stack, each with its own NATS
// connection: A is the stack's, B another. The memory's TTL is ten minutes here, longer than any
// test: whatever B shows change, a notice changed.
describe('the catalog flags on two gateway replicas', () => {
  let stack: TestStack;
  let replicaB: FastifyInstance;
  let ncB: NatsConnection;
  let app: { appId: string; key: string; secretKey: string };
  let content: AppContent;

  const replicaA = () => stack.app;

  /** Silver Chest's `meta.purchasable` ({coins, gems}) as `p` reads the catalog through `replica`. */
  async function silverFlags(replica: FastifyInstance, p: Player): Promise<Record<string, boolean> | undefined> {
    const res = await replica.inject({ method: 'GET', url: '/api/v1/chests?page[limit]=100', headers: jsonApiHeaders(app.key, p.token) });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expectJsonApi(body);
    const silver = (body.data as { attributes: { name: string }; meta: { purchasable?: Record<string, boolean> } }[]).find(
      (c) => c.attributes.name === 'Silver Chest',
    );
    return silver!.meta.purchasable;
  }

  /** The studio's PATCH /api/v1/admin/players/{id} through `replica`. */
  async function studioPatch(replica: FastifyInstance, p: Player, attributes: Record<string, unknown>): Promise<void> {
    const res = await replica.inject({
      method: 'PATCH',
      url: `/api/v1/admin/players/${p.id}`,
      headers: jsonApiHeaders(app.secretKey),
      payload: { data: { type: 'player', attributes } },
    });
    expect(res.statusCode, res.body).toBe(200);
  }

  beforeAll(async () => {
    stack = await startStack({ env: { PURCHASE_FLAGS_TTL_MS: '600000' } });
    content = readContentFile();
    const created = await stack.bus.request(AdminCreateApp, { name: 'Two replicas', content }, { requestId: randomUUID() });
    app = { appId: created.appId, key: created.publishableKey, secretKey: created.secretKey };

    const config = GatewayConfigSchema.parse(stack.env);
    ncB = await connect({ servers: stack.env.NATS_URL });
    const busB = new Bus(ncB, config.NATS_PREFIX, config.NATS_REQUEST_TIMEOUT_MS, { readTimeoutMs: config.NATS_READ_TIMEOUT_MS });
    replicaB = await buildApp({ config, bus: busB, redis: stack.redis });
    await replicaB.ready();

    // The app's content reached chests: both replicas see its catalog.
    const probe = await registerDeclaring(stack, { country: 'DE', birth_year: THIS_YEAR - 30 }, 'register', app.key);
    await eventually(async () => expect(await silverFlags(replicaB, probe)).toEqual({ coins: true, gems: true }), 20_000);
  }, 60_000);

  afterAll(async () => {
    await replicaB?.close();
    await ncB?.close();
    await stack?.close();
  });

  it("a player's own country change through A shows at once in the flags B kept", async () => {
    // No country declared: gems are refused (country unknown), and B keeps that.
    const p = await registerDeclaring(stack, { birth_year: THIS_YEAR - 30 }, 'register', app.key);
    expect(await silverFlags(replicaB, p)).toEqual({ coins: true, gems: false });
    expect(await silverFlags(replicaB, p)).toEqual({ coins: true, gems: false });

    const patched = await replicaA().inject({
      method: 'PATCH',
      url: '/api/v1/players/me',
      headers: jsonApiHeaders(app.key, p.token),
      payload: { data: { type: 'player', attributes: { country: 'AT' } } },
    });
    expect(patched.statusCode, patched.body).toBe(200);
    // Read at once, no waiting: the answer came after every gateway had been told.
    expect(await silverFlags(replicaB, p)).toEqual({ coins: true, gems: true });
    expect(await silverFlags(replicaA(), p)).toEqual({ coins: true, gems: true });
  });

  it("the studio's corrections through A show at once in the flags B kept, each time", async () => {
    const p = await registerDeclaring(stack, { country: 'DE', birth_year: THIS_YEAR - 30 }, 'register', app.key);
    expect(await silverFlags(replicaB, p)).toEqual({ coins: true, gems: true });
    for (let i = 0; i < 10; i++) {
      await studioPatch(replicaA(), p, { country: 'BE' });
      expect(await silverFlags(replicaB, p), `blocked region, round ${i}`).toEqual({ coins: true, gems: false });
      await studioPatch(replicaA(), p, { country: 'DE', birth_year: THIS_YEAR - 12 });
      expect(await silverFlags(replicaB, p), `minor, round ${i}`).toEqual({ coins: true, gems: false });
      await studioPatch(replicaA(), p, { birth_year: THIS_YEAR - 30 });
      expect(await silverFlags(replicaB, p), `allowed, round ${i}`).toEqual({ coins: true, gems: true });
    }
  });

  it('a content load that blocks a region shows in the flags both replicas kept, once chests took it', async () => {
    const p = await registerDeclaring(stack, { country: 'AT', birth_year: THIS_YEAR - 30 }, 'register', app.key);
    expect(await silverFlags(replicaA(), p)).toEqual({ coins: true, gems: true });
    expect(await silverFlags(replicaB, p)).toEqual({ coins: true, gems: true });

    const next = structuredClone(content);
    next.compliance!.blocked_regions = [...(next.compliance!.blocked_regions ?? []), 'AT'];
    await stack.bus.request(AdminLoadContent, { appId: app.appId, content: next }, { requestId: randomUUID() });
    // Chests applies the version asynchronously (its content consumer), then announces it.
    for (const replica of [replicaB, replicaA()]) {
      await eventually(async () => expect(await silverFlags(replica, p)).toEqual({ coins: true, gems: false }), 10_000, 50);
    }
  });
});
