import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ACK_WAIT_MS, grantsStream } from '@ccs/shared';
import { streamName } from '../../packages/shared/src/runtime/subjects.js';
import { startStack, type TestStack } from '../support/stack.js';

describe('durable consumer settings', () => {
  let stack: TestStack;

  beforeAll(async () => {
    stack = await startStack({ services: ['players', 'collections'] });
  });
  afterAll(async () => stack?.close());

  it('redelivers within seconds of a crash, and brings a durable made with older settings to them at start', async () => {
    const jsm = await stack.nc.jetstreamManager();
    const stream = grantsStream(stack.env.NATS_PREFIX!);
    const durable = streamName(stack.env.NATS_PREFIX!, 'collections-openings');
    expect((await jsm.consumers.info(stream, durable)).config.ack_wait).toBe(ACK_WAIT_MS * 1e6);
    expect(ACK_WAIT_MS).toBeLessThanOrEqual(5_000);
    await stack.stopService('collections');
    await jsm.consumers.update(stream, durable, { ack_wait: 30e9 });
    await stack.startService('collections');
    expect((await jsm.consumers.info(stream, durable)).config.ack_wait).toBe(ACK_WAIT_MS * 1e6);
  });
});
