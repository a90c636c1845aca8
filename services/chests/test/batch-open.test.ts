import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, jsonApiHeaders, startStack, type TestStack } from '../../../test/support/stack.js';
import { expectError } from '../../../test/support/jsonapi-schema.js';
import { grantChests, inventory, open, registerPlayer, sql, type Player } from './support/chests.js';

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

  it('answers a retry with its Idempotency-Key with the first batch, and refuses the key with other chests', async () => {
    const { player, chests } = await playerWith('wooden-chest', 4);
    const key = `batch-${randomUUID()}`;
    const [a, b] = await Promise.all([openMany(player, chests.slice(0, 3), key), openMany(player, chests.slice(0, 3), key)]);
    expect([a.statusCode, b.statusCode], `${a.body} ${b.body}`).toEqual([200, 200]);
    expect([a.headers['idempotent-replayed'], b.headers['idempotent-replayed']].sort()).toEqual(['true', undefined]);
    // A replay racing the first request may answer before collections applied the grants: the
    // duplicate conversions, known only then, are the one thing it may not show yet.
    const known = (r: typeof a) =>
      r.json().data.map(({ meta: { conversions: _c, ...meta }, collectibles, ...d }: any) => ({
        ...d,
        meta,
        collectibles: collectibles.map(({ meta: _m, ...c }: any) => c),
      }));
    expect(known(b)).toEqual(known(a));
    const [openings] = await sql<{ n: number }>(stack, 'SELECT count(*)::int AS n FROM chests.openings WHERE chest_id = ANY($1::uuid[])', [chests]);
    expect(openings!.n).toBe(3);
    expectError(await openMany(player, [chests[3]!], key), 409, 'idempotency_key_reused');
  });

  it('carries pity through the batch as through single openings, and races single opens without losing or doubling a chest', async () => {
    const { player, chests } = await playerWith('silver-chest', 30);
    const singles = chests.slice(20, 25);
    const [batch, ...alone] = await Promise.all([openMany(player, chests.slice(0, 25)), ...singles.map((id) => open(stack, player, id))]);
    const singleOk = alone.filter((r) => r.statusCode === 200).length;
    if (batch.statusCode === 200) {
      expect(singleOk).toBe(0);
      let counter = 0;
      for (const d of batch.json().data) {
        expect(d.meta.pity.opens_since_before).toBe(counter);
        counter = d.meta.pity.opens_since_after;
      }
      expect(await opened(chests)).toHaveLength(25);
    } else {
      expectError(batch, 403, 'chest_already_opened');
      expect(singleOk).toBeGreaterThan(0);
      expect(await opened(chests)).toHaveLength(singleOk);
    }
    // Whatever won, each chest was consumed at most once, by exactly one opening.
    const rows = await sql<{ chest_id: string; n: number }>(
      stack,
      'SELECT chest_id, count(*)::int AS n FROM chests.openings WHERE chest_id = ANY($1::uuid[]) GROUP BY chest_id',
      [chests],
    );
    expect(rows.every((r) => r.n === 1)).toBe(true);
    const rest = await openMany(player, chests.slice(25));
    expect(rest.statusCode, rest.body).toBe(200);
  });
});
