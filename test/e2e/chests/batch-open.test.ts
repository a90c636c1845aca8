import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, jsonApiHeaders, startStack, type TestStack } from '../../support/stack.js';
import { expectError } from '../../support/jsonapi-schema.js';
import { grantChests, inventory, open, registerPlayer, sql, type Player } from '../../../services/chests/test/support/chests.js';

// The HTTP side of batch open: the rendered batch and its grants applied by collections, and the
// refusals as the gateway renders them (its own 422 for an empty batch or more than 50 chests, so
// that case runs on the service tier as well). Idempotency and the race with single opens are
// chests' own (services/chests/test/batch-open.test.ts, service tier).
describe('batch open (POST /api/v1/chests/open)', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startStack();
  });
  afterAll(async () => stack?.close());

  /** A player holding `n` more chests of a type (granted as a studio grant would), besides the starter chest. */
  async function playerWith(slug: string, n: number): Promise<{ player: Player; chests: string[] }> {
    const player = await registerPlayer(stack);
    await eventually(async () => expect((await inventory(stack, player)).meta.total_chests).toBe(1), 20_000);
    return { player, chests: await grantChests(stack, player, slug, n) };
  }

  const openMany = (p: Player, ids: string[], key?: string) =>
    stack.inject({
      method: 'POST',
      url: '/api/v1/chests/open',
      headers: { ...jsonApiHeaders(p.apiKey, p.token), ...(key ? { 'idempotency-key': key } : {}) },
      payload: { data: ids.map((id) => ({ type: 'chest', id })) },
    });
  const opened = (ids: string[]) =>
    sql<{ id: string }>(stack, 'SELECT id FROM chests.inventory_chests WHERE id = ANY($1::uuid[]) AND opened_at IS NOT NULL', [ids]);

  it('opens the chests in order, one opening and one grant each, with consecutive nonces, and grants them all', async () => {
    const { player, chests } = await playerWith('wooden-chest', 10);
    const res = await openMany(player, chests);
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body.data.map((d: { chest_id: string }) => d.chest_id)).toEqual(chests);
    expect(body.data.map((d: { meta: { fairness: { nonce: number } } }) => d.meta.fairness.nonce)).toEqual(chests.map((_, i) => i));
    const items = body.data.reduce((n: number, d: { collectibles: unknown[] }) => n + d.collectibles.length, 0);
    expect(body.meta).toMatchObject({ chests_consumed: 10, message: `10 chests opened: ${items} collectibles added to your collection.` });
    expect(await opened(chests)).toHaveLength(10);
    const openingIds = body.data.map((d: { meta: { opening_id: string } }) => d.meta.opening_id);
    const [granted] = await sql<{ n: number }>(
      stack,
      'SELECT count(*)::int AS n FROM collections.owned_collectibles WHERE opening_id = ANY($1::uuid[])',
      [openingIds],
    );
    expect(granted!.n).toBe(items);
  });

  it('opens nothing when one chest cannot be opened, and names it', async () => {
    const { player, chests } = await playerWith('wooden-chest', 5);
    expect((await open(stack, player, chests[3]!)).statusCode).toBe(200);
    const errors = expectError(await openMany(player, chests), 403, 'chest_already_opened');
    expect(errors[0]!.source).toEqual({ pointer: '/data/3/id' });
    expect(await opened(chests)).toHaveLength(1);

    // Registration answers once the starter chest is in the inventory.
    const stranger = await registerPlayer(stack);
    const notMine = expectError(await openMany(player, [chests[0]!, stranger.starterChestId]), 403, 'chest_not_owned');
    expect(notMine[0]!.source).toEqual({ pointer: '/data/1/id' });
    expect(expectError(await openMany(player, [randomUUID()]), 404, 'chest_not_found')[0]!.source).toEqual({ pointer: '/data/0/id' });
    expect(expectError(await openMany(player, [chests[0]!, chests[0]!]), 422, 'duplicate_chest')[0]!.source).toEqual({ pointer: '/data/1/id' });
    expectError(await openMany(player, []), 422);
    expectError(
      await openMany(
        player,
        Array.from({ length: 51 }, () => randomUUID()),
      ),
      422,
    );
    expect(await opened(chests)).toHaveLength(1);
  });
});
