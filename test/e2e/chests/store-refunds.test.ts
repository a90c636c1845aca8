import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChestGrant, DURABLE, StoreRefundApplied, watchApplied, type EventContract } from '@ccs/shared';
import type { z } from 'zod';
import { jsonApiHeaders, startStack, type TestStack } from '../../support/stack.js';
import { expectError } from '../../support/jsonapi-schema.js';
import { appIdOf, inventory, open, registerPlayer, sql, waitForStarterChest, type Player } from '../../../services/chests/test/support/chests.js';

// A store refund's chests as a player sees them through the gateway: revoked chests are gone from
// the inventory (its counts and estimated value), unknown to an open and a batch open, and back
// after a reversal. The consumer's cases (idempotency, refund before grant, the mailbox, the race
// with an opening) are chests' own: services/chests/test/store-refunds.test.ts (service tier).
describe('store refunds and the player inventory', () => {
  let stack: TestStack;
  let appId: string;
  let player: Player;
  beforeAll(async () => {
    stack = await startStack({ services: ['players', 'wallet', 'chests', 'collections'] });
    appId = await appIdOf(stack);
    player = await registerPlayer(stack);
    await waitForStarterChest(stack, player);
  });
  afterAll(async () => stack?.close());

  /** Publishes a durable message as the store's outbox relay does, and waits until `durable` applied it. */
  async function publishApplied<P extends z.ZodType>(event: EventContract<P>, payload: z.infer<P>, durable: string, id = randomUUID()) {
    const watch = watchApplied(stack.nc, stack.env.NATS_PREFIX!, [id], durable);
    await stack.nc.jetstream().publish(`${stack.env.NATS_PREFIX}.${event.subject}`, JSON.stringify(event.payload.parse(payload)), { msgID: id });
    expect((await watch.done(20_000)).has(id), `${event.subject} ${id} applied`).toBe(true);
  }
  const refund = (purchaseId: string, chestIds: string[], kind: 'refund' | 'reversal') => {
    const refundId = randomUUID();
    const payload = { refundId, appId, playerId: player.id, purchaseId, kind, policy: 'revoke_then_debt' as const, currencies: [], chestIds };
    return publishApplied(StoreRefundApplied, payload, DURABLE.chestsStoreRefunds, refundId);
  };
  const openMany = (ids: string[]) =>
    stack.inject({
      method: 'POST',
      url: '/api/v1/chests/open',
      headers: jsonApiHeaders(player.apiKey, player.token),
      payload: { data: ids.map((id) => ({ type: 'chest', id })) },
    });

  it('hides revoked chests from the inventory, its counts and value, and from opening; a reversal brings them back', async () => {
    const alone = (await inventory(stack, player)).meta;
    // The chests a verified purchase bought, granted as the store grants them.
    const bought = [randomUUID(), randomUUID(), randomUUID()];
    for (const id of bought) {
      const grant = { appId, playerId: player.id, inventoryChestId: id, chestTypeId: 'golden-chest', source: 'purchased' as const };
      await publishApplied(ChestGrant, grant, DURABLE.chestsGrants);
    }
    const [opened, ...unopened] = bought as [string, string, string];
    expect((await open(stack, player, opened)).statusCode).toBe(200);
    const withPurchase = await inventory(stack, player);
    expect(withPurchase.meta.chest_types.purchased).toBe(2);

    const purchaseId = randomUUID();
    await refund(purchaseId, bought, 'refund');
    const after = await inventory(stack, player);
    expect(after.data.map((c: { id: string }) => c.id)).toEqual([player.starterChestId]);
    expect(after.meta).toEqual(alone);
    for (const id of unopened) expectError(await open(stack, player, id), 404, 'chest_not_found');
    const batch = expectError(await openMany([player.starterChestId, unopened[0]]), 404, 'chest_not_found');
    expect(batch[0]!.source).toEqual({ pointer: '/data/1/id' });
    // The opened chest keeps its opening; the batch opened nothing.
    expectError(await open(stack, player, opened), 403, 'chest_already_opened');
    expect(await sql(stack, 'SELECT 1 FROM chests.openings WHERE chest_id = $1', [opened])).toHaveLength(1);
    expect(await sql(stack, 'SELECT 1 FROM chests.openings WHERE chest_id = $1', [player.starterChestId])).toHaveLength(0);

    await refund(purchaseId, bought, 'reversal');
    const restored = await inventory(stack, player);
    expect(restored).toEqual(withPurchase);
    expect((await open(stack, player, unopened[0])).statusCode).toBe(200);
  });
});
