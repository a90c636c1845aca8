import { randomBytes, randomUUID } from 'node:crypto';
import { connect, type NatsConnection } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Bus, endpoint, WebhookInterest, type CallContext, type RequestOf } from '../src/index.js';
import { serveStandIn, testInfra, webhookInterestStandIn, type ReceivedCall } from '../src/testing/index.js';

/**
 * The service tier's stand-ins answer as the real service would only while they keep to the
 * contract: a request the contract refuses is a 400, a reply it refuses a 500, never a silent pass.
 */
describe('service tier: contract-bound stand-ins', () => {
  let nc: NatsConnection;
  let bus: Bus;
  let lax: Bus;
  const prefix = `t${randomBytes(4).toString('hex')}`;
  const calls: ReceivedCall[] = [];
  const appId = randomUUID();
  const ctx: CallContext = { requestId: randomUUID(), appId };

  beforeAll(async () => {
    nc = await connect({ servers: (await testInfra()).natsUrl });
    bus = new Bus(nc, prefix, 2000);
    lax = bus.withOptions({ validateRequests: false });
  });
  afterAll(async () => nc?.close());

  it('answers within the contract and records who asked what', async () => {
    serveStandIn(nc, prefix, webhookInterestStandIn(['currency.credited']), calls);
    await nc.flush();
    expect(await bus.request(WebhookInterest, { appId }, ctx)).toEqual({ types: ['currency.credited'] });
    expect(calls).toEqual([{ subject: WebhookInterest.subject, payload: { appId }, appId, playerId: undefined }]);
  });

  it('refuses a request the contract refuses with 400 invalid_message, and records nothing', async () => {
    const before = calls.length;
    const bad = { appId: 'not-a-uuid' } as RequestOf<typeof WebhookInterest>;
    await expect(lax.request(WebhookInterest, bad, ctx)).rejects.toMatchObject({ kind: 'bad_request', code: 'invalid_message' });
    expect(calls).toHaveLength(before);
  });

  it('answers a 500 for a reply the contract refuses, so a drifting stand-in fails the test that uses it', async () => {
    const drifting = `${prefix}x`;
    // A stand-in whose answer no longer fits the reply schema (an event type the contract does not know).
    const wrong = endpoint(WebhookInterest, async () => ({ types: ['chest.exploded'] }) as never);
    serveStandIn(nc, drifting, wrong);
    await nc.flush();
    await expect(new Bus(nc, drifting, 2000).request(WebhookInterest, { appId }, ctx)).rejects.toMatchObject({ kind: 'internal' });
  });
});
