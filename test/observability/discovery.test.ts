/**
 * NATS service discovery: every service answers `$SRV.PING`, `$SRV.INFO` and `$SRV.STATS` under
 * its name (with the stack's NATS_PREFIX), as `nats micro ls|info|stats` would ask, on a real
 * nats-server. Replicas show up as instances of the same service.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { RequestStrategy, type ServiceClient } from 'nats';
import { startService, type BaseConfig } from '@ccs/shared';
import { startStack, type TestStack } from '../support/stack.js';
import { chestsService } from '../../services/chests/src/service.js';
import { ChestsConfigSchema } from '../../services/chests/src/config.js';

const SERVICES = ['players', 'wallet', 'chests', 'collections', 'egress', 'store'];
let stack: TestStack;
let client: ServiceClient;
let name: (service: string) => string;

/** All answers to one discovery request (the client waits until answers stop coming). */
async function all<T>(it: Promise<AsyncIterable<T>>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of await it) out.push(x);
  return out;
}

beforeAll(async () => {
  stack = await startStack();
  client = stack.nc.services.client({ strategy: RequestStrategy.JitterTimer, maxWait: 3000, jitter: 300 });
  name = (service) => `${stack.env.NATS_PREFIX}-${service}`;
});
afterAll(async () => stack?.close());

describe('NATS service discovery', () => {
  it('each service answers PING under its prefixed name, and a PING to all finds the six of this stack', async () => {
    for (const s of SERVICES) {
      const pongs = await all(client.ping(name(s)));
      expect(
        pongs.map((p) => [p.name, p.version]),
        s,
      ).toEqual([[name(s), '0.1.0']]);
    }
    const everyone = await all(client.ping());
    const ours = everyone.filter((p) => p.name.startsWith(`${stack.env.NATS_PREFIX}-`));
    expect(ours.map((p) => p.name).sort()).toEqual(SERVICES.map(name).sort());
  });

  it('INFO lists each endpoint with its prefixed subject, queue group and contract', async () => {
    const [info] = await all(client.info(name('chests')));
    expect(info!.description).toBe('Collectible Chest Service: chests');
    const open = info!.endpoints.find((e) => e.name === 'chests_v1_open');
    expect(open).toMatchObject({
      subject: `${stack.env.NATS_PREFIX}.chests.v1.open`,
      queue_group: name('chests'),
      metadata: { contract: 'chests.v1.open' },
    });
    expect(info!.endpoints.map((e) => e.metadata?.contract)).toContain('chests.v1.health');
  });

  it('STATS counts requests per endpoint, with our own tallies of errors and handling time', async () => {
    const ok = await stack.inject({ method: 'GET', url: '/api/v1/chests', headers: { apikey: stack.apiKey } });
    expect(ok.statusCode).toBe(200);
    const missing = await stack.inject({ method: 'GET', url: `/api/v1/chests/${randomUUID()}`, headers: { apikey: stack.apiKey } });
    expect(missing.statusCode).toBe(404);

    const [stats] = await all(client.stats(name('chests')));
    const endpoints = stats!.endpoints ?? [];
    const list = endpoints.find((e) => e.name === 'chests_v1_list_chest_types')!;
    const detail = endpoints.find((e) => e.name === 'chests_v1_get_chest_type')!;
    expect(list.num_requests).toBe(1);
    expect(detail.num_requests).toBe(1);
    expect(list.data).toMatchObject({ requests: 1, errors: 0 });
    expect(detail.data).toMatchObject({ requests: 1, errors: 1 });
  });

  it('a second replica is a second instance of the same service, gone again once stopped', async () => {
    const replica = await startService(chestsService, ChestsConfigSchema.parse(stack.env) as BaseConfig);
    try {
      const pongs = await all(client.ping(name('chests')));
      expect(pongs).toHaveLength(2);
      expect(new Set(pongs.map((p) => p.id)).size).toBe(2);
    } finally {
      await replica.stop();
    }
    expect(await all(client.ping(name('chests')))).toHaveLength(1);
  });
});
