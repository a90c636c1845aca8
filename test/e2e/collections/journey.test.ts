import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, jsonApiHeaders, startStack, type TestStack } from '../../support/stack.js';
import { expectJsonApi } from '../../support/jsonapi-schema.js';
import { get, waitForContent } from './support.js';

interface OpenedItem {
  id: string;
  attributes: { collection_id: string; rarity: string };
}

// End to end through the real chests service: what an opening grants shows in the collections at once.
describe('opening a chest, then reading the collection', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startStack();
    await waitForContent(stack);
  });
  afterAll(async () => stack?.close());

  it("shows the opened items in the player's collection right after the open answers, and adds the experience", async () => {
    const reg = await stack.inject({
      method: 'POST',
      url: '/api/v1/players/register',
      headers: jsonApiHeaders(stack.apiKey),
      payload: {
        data: {
          type: 'player',
          attributes: { email: 'journey@example.com', password: 'Str0ng!pass', password_confirmation: 'Str0ng!pass' },
          relationships: {},
        },
      },
    });
    expect(reg.statusCode, reg.body).toBe(201);
    const token: string = reg.json().meta.access_token;
    const chestId: string = reg.json().meta.welcome_bonus.starter_chest;

    // The starter chest lands in the inventory through its own durable grant.
    const opened = await eventually(async () => {
      const res = await stack.inject({ method: 'GET', url: `/api/v1/chests/${chestId}/open`, headers: jsonApiHeaders(stack.apiKey, token) });
      expect(res.statusCode, res.body).toBe(200);
      return res.json();
    });
    const items: OpenedItem[] = opened.data.collectibles;
    expect(items.length).toBeGreaterThan(0);

    // No waiting: the open answered after collections applied the grant (read-your-writes).
    const first = items[0]!;
    const detail = (await get(stack, `/api/v1/collectibles/${first.id}`, token)).json();
    expectJsonApi(detail);
    expect(detail.meta).toMatchObject({ owned_by_player: true, acquired_at: new Date(opened.data.opened_at).toISOString() });
    expect(detail.meta.owned_count).toBe(items.filter((i) => i.id === first.id).length);
    expect(detail.meta.rarity_info.level).toBe(first.attributes.rarity);

    const mine = (await get(stack, '/api/v1/players/me/collection', token)).json();
    expectJsonApi(mine);
    expect(mine.meta.total_copies).toBe(items.length);
    expect(new Set(mine.data.map((c: { id: string }) => c.id))).toEqual(new Set(items.map((i) => i.id)));
    const progress = (await get(stack, `/api/v1/collections/${first.attributes.collection_id}`, token)).json();
    const distinctThere = new Set(items.filter((i) => i.attributes.collection_id === first.attributes.collection_id).map((i) => i.id));
    expect(progress.meta.collection_completeness.unique_items).toBe(distinctThere.size);

    await eventually(async () => {
      const me = await stack.inject({ method: 'GET', url: '/api/v1/players/me', headers: jsonApiHeaders(stack.apiKey, token) });
      expect(me.json().data.attributes.experience).toBe(opened.meta.experience_gained);
    });
  });
});
