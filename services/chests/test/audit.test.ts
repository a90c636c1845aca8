import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, jsonApiHeaders, startStack, type TestStack } from '../../../test/support/stack.js';
import { expectJsonApi } from '../../../test/support/jsonapi-schema.js';
import { inventory, open, purchase, registerPlayer, sql, defaultCatalogIds } from './support/chests.js';

describe('the openings audit', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startStack();
  });
  afterAll(async () => stack?.close());

  it('lists each opening with its rules version, fairness inputs and pity before and after', async () => {
    const p = await registerPlayer(stack);
    const ids = await defaultCatalogIds(stack);
    await eventually(async () => expect((await inventory(stack, p)).meta.total_chests).toBe(1));
    const bought = await purchase(stack, p, ids['Silver Chest']!, 'coins');
    expect(bought.statusCode, bought.body).toBe(201);
    const silver = bought.json().data[0].id;
    const first = (await open(stack, p, p.starterChestId)).json();
    const second = (await open(stack, p, silver)).json();
    const res = await stack.inject({ method: 'GET', url: '/api/v1/players/me/openings', headers: jsonApiHeaders(p.apiKey, p.token) });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expectJsonApi(body);
    const [newest, oldest] = body.data;
    expect(newest.id).toBe(second.meta.opening_id);
    expect(newest.attributes).toMatchObject({
      rules_version: 1,
      fairness: { ...second.meta.fairness, nonce: 1 },
      pity: { group: 'silver-chest', rarity: 'legendary', opens_since_before: 0, triggered: false },
    });
    expect(oldest.attributes).toMatchObject({ fairness: { ...first.meta.fairness, nonce: 0 }, pity: null });
  });

  it('keeps openings OPENINGS_RETENTION_DAYS (365) and deletes older ones, keeping their chests opened', async () => {
    const p = await registerPlayer(stack);
    const ids = await defaultCatalogIds(stack);
    const bought = await purchase(stack, p, ids['Wooden Chest']!, 'coins', 1);
    const chest = bought.json().data[0].id;
    await eventually(async () => expect((await inventory(stack, p)).meta.total_chests).toBe(2));
    const kept = (await open(stack, p, p.starterChestId)).json().meta.opening_id;
    const old = (await open(stack, p, chest)).json().meta.opening_id;
    await sql(stack, "UPDATE chests.openings SET opened_at = now() - interval '364 days' WHERE id = $1", [kept]);
    await sql(stack, "UPDATE chests.openings SET opened_at = now() - interval '366 days' WHERE id = $1", [old]);
    // The sweep runs when the service starts, then daily.
    await stack.stopService('chests');
    await stack.startService('chests');
    await eventually(async () => expect(await sql(stack, 'SELECT id FROM chests.openings WHERE id = $1', [old])).toHaveLength(0));
    expect(await sql(stack, 'SELECT id FROM chests.openings WHERE id = $1', [kept])).toHaveLength(1);
    // The chest stays consumed: it cannot be opened again.
    expect((await open(stack, p, chest)).statusCode).toBe(403);
  });
});
