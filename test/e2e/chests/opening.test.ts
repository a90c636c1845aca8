import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { ChestGrant, readContentFile, chestTypeId } from '@ccs/shared';
import { eventually, jsonApiHeaders, startStack, type TestStack } from '../../support/stack.js';
import { expectError, expectJsonApi } from '../../support/jsonapi-schema.js';
import {
  appIdOf,
  get,
  inventory,
  open,
  purchase,
  registerPlayer,
  sql,
  defaultCatalogIds,
  type Player,
} from '../../../services/chests/test/support/chests.js';

const content = readContentFile();
const experience = new Map(content.rarities.map((r) => [r.id, r.experience]));
const collectibles = new Map(content.collections.flatMap((col) => col.collectibles.map((c) => [c.id, { ...c, collection_id: col.id }])));

interface OpeningBody {
  data: {
    chest_id: string;
    opened_at: string;
    collectibles: { type: string; id: string; attributes: Record<string, unknown> }[];
    statistics: { total_items: number; rarity_breakdown: Record<string, number> };
  };
  meta: { chest_consumed: boolean; experience_gained: number; message: string; opening_id: string };
}

// The HTTP side of opening a chest: the rendered result, GET and POST, the gateway's validation,
// idempotency headers, read-your-writes through collections and the openings list. Refusals,
// app isolation and a chest consumed once under concurrent opens are chests' own
// (services/chests/test/opening.test.ts, service tier).
describe('opening a chest', () => {
  let stack: TestStack;
  let appId: string;
  let ids: Record<string, string>;

  beforeAll(async () => {
    // The relay's timer is slowed down so that only the opening's own publish can meet the wait.
    stack = await startStack({ env: { OUTBOX_INTERVAL_MS: '60000' } });
    appId = await appIdOf(stack);
    ids = await defaultCatalogIds(stack);
  });
  afterAll(async () => stack?.close());

  async function newPlayer(): Promise<Player> {
    // Registration answers once its starter chest is in the inventory.
    const p = await registerPlayer(stack);
    return p;
  }

  /** A fresh purchased chest of the player (wooden chests cost 500 coins; players start with 1500). */
  async function buyWooden(p: Player): Promise<string> {
    const res = await purchase(stack, p, ids['Wooden Chest']!, 'coins');
    expect(res.statusCode, res.body).toBe(201);
    return res.json().data[0].id;
  }

  it('consumes the starter chest and answers the chest-opening result, its items already in the collection', async () => {
    const p = await newPlayer();
    const res = await open(stack, p, p.starterChestId);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['content-type']).toContain('application/vnd.api+json');
    expect(res.headers['cache-control']).toBe('no-store');
    const body: OpeningBody = res.json();
    expect(body.data.chest_id).toBe(p.starterChestId);
    expect(new Date(body.data.opened_at).toISOString()).toBe(body.data.opened_at);
    expect(body.data.collectibles).toHaveLength(3);
    for (const c of body.data.collectibles) {
      const known = collectibles.get(c.id)!;
      expect(c).toEqual({
        type: 'collectible',
        id: known.id,
        attributes: {
          name: known.name,
          description: known.description,
          collection_id: known.collection_id,
          images: known.images,
          rarity: known.rarity,
        },
      });
    }
    const breakdown: Record<string, number> = {};
    for (const c of body.data.collectibles) breakdown[String(c.attributes.rarity)] = (breakdown[String(c.attributes.rarity)] ?? 0) + 1;
    expect(body.data.statistics).toEqual({ total_items: 3, rarity_breakdown: breakdown });
    expect(body.meta.chest_consumed).toBe(true);
    expect(body.meta.experience_gained).toBe(body.data.collectibles.reduce((s, c) => s + experience.get(String(c.attributes.rarity))!, 0));
    expect(body.meta.message).toMatch(/added to your collection/);

    // Read-your-writes: no waiting, the grant has been applied before the answer.
    const first = body.data.collectibles[0]!;
    const owned = await get(stack, `/api/v1/collectibles/${first.id}`, p.token);
    expect(owned.statusCode, owned.body).toBe(200);
    expect(owned.json().meta.owned_by_player).toBe(true);
    expect((await inventory(stack, p)).meta.total_chests).toBe(0);
  });

  it('opens with POST as well, with or without a JSON:API content type', async () => {
    const p = await newPlayer();
    const res = await stack.inject({
      method: 'POST',
      url: `/api/v1/chests/${p.starterChestId}/open`,
      headers: jsonApiHeaders(stack.apiKey, p.token),
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    const bought = await buyWooden(p);
    expect((await open(stack, p, bought, { method: 'POST' })).statusCode).toBe(200);
  });

  it("answers 403 chest_not_owned for another player's chest, and 404/400/401 for unknown, malformed, anonymous", async () => {
    const [owner, thief] = await Promise.all([newPlayer(), newPlayer()]);
    expectError(await open(stack, thief, owner.starterChestId), 403, 'chest_not_owned');
    expectError(await open(stack, thief, '6a1c4c0e-52a1-4c55-9d42-4b0f0e0d9c11'), 404, 'chest_not_found');
    expectError(await open(stack, thief, 'chest-1'), 400, 'invalid_id');
    expectError(await stack.inject({ method: 'GET', url: `/api/v1/chests/${owner.starterChestId}/open`, headers: { apikey: stack.apiKey } }), 401);
    expectError(await get(stack, `/api/v1/chests/${owner.starterChestId}/open?fields[chest]=name`, owner.token), 400);
    // The catalog id of a chest type is not an inventory chest.
    expectError(await open(stack, owner, ids['Wooden Chest']!), 404, 'chest_not_found');
    expect((await inventory(stack, owner)).meta.total_chests).toBe(1);
  });

  it('returns the first result again for the same Idempotency-Key, and 409 for that key on another chest', async () => {
    const p = await newPlayer();
    const first = await open(stack, p, p.starterChestId, { idempotencyKey: 'open-once-1' });
    expect(first.statusCode).toBe(200);
    const again = await open(stack, p, p.starterChestId, { idempotencyKey: 'open-once-1', method: 'POST' });
    expect(again.statusCode).toBe(200);
    expect(again.json()).toEqual(first.json());
    expect(again.headers['idempotent-replayed']).toBe('true');
    const other = await buyWooden(p);
    expectError(await open(stack, p, other, { idempotencyKey: 'open-once-1' }), 409, 'idempotency_key_reused');
    // The reused key was refused by the opening's write itself: nothing of it stayed.
    expect(await sql(stack, 'SELECT id FROM chests.openings WHERE chest_id = $1', [other])).toHaveLength(0);
    expectError(await open(stack, p, other, { idempotencyKey: 'bad key with spaces' }), 400, 'invalid_idempotency_key');
    // Keys are per player: another player may use the same one.
    const q = await newPlayer();
    expect((await open(stack, q, q.starterChestId, { idempotencyKey: 'open-once-1' })).statusCode).toBe(200);
    expect(await sql(stack, 'SELECT id FROM chests.openings WHERE chest_id = $1', [p.starterChestId])).toHaveLength(1);
    // Without a key, the opening travels under the gateway's retry key (a repeat to another replica opens nothing twice).
    const unkeyed = await buyWooden(p);
    const plain = await open(stack, p, unkeyed);
    expect(plain.statusCode).toBe(200);
    expect(plain.headers['idempotent-replayed']).toBeUndefined();
    expect(await sql(stack, 'SELECT kind, idempotency_key FROM chests.opening_keys WHERE chest_ids = ARRAY[$1::uuid]', [unkeyed])).toEqual([
      { kind: 'one', idempotency_key: expect.stringMatching(/^retry:[0-9a-f-]{36}$/) },
    ]);
  });

  it('applies every grant before answering when many different chests open at once (read-your-writes)', async () => {
    const p = await newPlayer();
    const chests = [p.starterChestId];
    const js = stack.nc.jetstream();
    for (let i = 0; i < 24; i++) {
      const id = randomUUID();
      chests.push(id);
      const grant = ChestGrant.payload.parse({ appId, playerId: p.id, inventoryChestId: id, chestTypeId: 'silver-chest', source: 'earned' });
      await js.publish(`${stack.env.NATS_PREFIX}.${ChestGrant.subject}`, JSON.stringify(grant), { msgID: randomUUID() });
    }
    await eventually(async () => expect((await inventory(stack, p)).meta.total_chests).toBe(25));
    const results = await Promise.all(chests.map((id) => open(stack, p, id)));
    let items = 0;
    for (const r of results) {
      expect(r.statusCode, r.body).toBe(200);
      expect(r.json().meta.message).toMatch(/added to your collection/);
      items += r.json().data.statistics.total_items;
    }
    const granted = await sql<{ n: number }>(stack, 'SELECT count(*)::int AS n FROM collections.owned_collectibles WHERE player_id = $1', [p.id]);
    expect(granted[0]!.n).toBe(items);
  });

  it('lists the openings newest first with their results, paginated', async () => {
    const p = await newPlayer();
    const opened = [(await open(stack, p, p.starterChestId)).json()];
    for (let i = 0; i < 2; i++) opened.push((await open(stack, p, await buyWooden(p))).json());
    const res = await get(stack, '/api/v1/players/me/openings?page[limit]=2', p.token);
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    const body = res.json();
    expectJsonApi(body);
    expect(body.meta).toEqual({ total_count: 3, page: { limit: 2, offset: 0 } });
    expect(body.data.map((o: { id: string }) => o.id)).toEqual([opened[2].meta.opening_id, opened[1].meta.opening_id]);
    expect(opened[2].meta.conversions).toBeDefined();
    const latest = body.data[0];
    expect(latest).toEqual({
      type: 'chest_opening',
      id: opened[2].meta.opening_id,
      attributes: {
        ...opened[2].data,
        chest_type_id: chestTypeId(appId, 'wooden-chest'),
        experience_gained: opened[2].meta.experience_gained,
        rules_version: 1,
        // The audit: the same fairness inputs and pity state the opening answered with.
        pity: opened[2].meta.pity,
        fairness: opened[2].meta.fairness,
        // And what collections converted as duplicates (the answer had it: collections confirmed the grant).
        conversions: opened[2].meta.conversions,
      },
      relationships: {},
    });
    expect(body.links.next).toContain('page%5Boffset%5D=2');
    const rest = (await get(stack, '/api/v1/players/me/openings?page[limit]=2&page[offset]=2', p.token)).json();
    expect(rest.data.map((o: { id: string }) => o.id)).toEqual([opened[0].meta.opening_id]);
    expect(rest.links.next).toBeNull();
    const other = await registerPlayer(stack);
    expect((await get(stack, '/api/v1/players/me/openings', other.token)).json().data).toEqual([]);
    expectError(await get(stack, '/api/v1/players/me/openings'), 401);
    expectError(await get(stack, '/api/v1/players/me/openings?page[limit]=500', p.token), 400, 'invalid_page');
    expectError(await get(stack, '/api/v1/players/me/openings?sort=opened_at', p.token), 400, 'unsupported_sort');
  });
});
