import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, jsonApiHeaders, startStack, type TestStack } from '../support/stack.js';
import { registerThroughGateway, type RegisteredPlayer } from '../support/register.js';
import { expectJsonApi } from '../support/jsonapi-schema.js';
import { pointer } from '../../services/gateway/test/support/openapi-document.js';
import { coinRules, createDupesApp, dupesContent, grantChests, openChest, waitForChests } from './support.js';

const DOC_ID = 'https://ccs.invalid/openapi.json';

/**
 * Duplicate conversion as players see it (docs/content.md, "Duplicates"): the opening answer's
 * `meta.converted` per item and `meta.conversions`, the openings audit, `meta.copies_owned` and
 * the wallet. A pool of one collectible and max_copies 2, so each opening's fate is known.
 */
describe('duplicate conversion through the gateway', () => {
  let stack: TestStack;
  let app: { appId: string; key: string };
  let ajv: Ajv2020;

  beforeAll(async () => {
    stack = await startStack();
    app = await createDupesApp(stack, dupesContent(coinRules(2), { pool: ['dupe-common'] }));
    const doc = await stack.inject({ method: 'GET', url: '/api/v1/openapi.json' });
    ajv = new Ajv2020({ strict: false, allErrors: true });
    (addFormats as unknown as (a: Ajv2020) => void)(ajv);
    ajv.addSchema({ ...(doc.json() as object), $id: DOC_ID }, undefined, undefined, false);
  });
  afterAll(async () => stack?.close());

  /** Asserts a 200 answer that validates against the OpenAPI document of its route; returns its body. */
  function documented(res: LightMyRequestResponse, path: string, method: 'get' | 'post' = 'get'): any {
    expect(res.statusCode, res.body).toBe(200);
    const validate = ajv.getSchema(DOC_ID + pointer('paths', path, method, 'responses', '200', 'content', 'application/vnd.api+json', 'schema'))!;
    expect(validate(res.json()) ? [] : validate.errors, res.body.slice(0, 600)).toEqual([]);
    return res.json();
  }

  const get = (p: RegisteredPlayer, url: string) => stack.inject({ method: 'GET', url, headers: jsonApiHeaders(app.key, p.token) });
  const convertedOf = (body: any) => body.data.collectibles.map((c: any) => c.meta?.converted ?? null);

  async function newPlayer(extraChests: number): Promise<{ p: RegisteredPlayer; chests: string[] }> {
    const p = await registerThroughGateway(stack, app.key);
    const extra = await grantChests(stack, app.appId, p.id, extraChests);
    await waitForChests(stack, app.key, p.token, [p.starterChestId, ...extra]);
    return { p, chests: [p.starterChestId, ...extra] };
  }

  it('shows what was converted in the opening answer, its replay, the openings audit, the copies and the wallet', async () => {
    const { p, chests } = await newPlayer(1);
    const first = documented(await openChest(stack, app.key, p.token, chests[0]!), '/api/v1/chests/{id}/open');
    expect(convertedOf(first)).toEqual([null, null, { currency: 'coins', amount: 20 }]);
    expect(first.meta.conversions).toEqual({ coins: 20 });
    expect(first.meta.message).toBe(
      'Chest opened: 3 collectibles (3 common) added to your collection; 1 of them was a duplicate, converted into 20 coins.',
    );

    const second = documented(await openChest(stack, app.key, p.token, chests[1]!, 'dupes-key'), '/api/v1/chests/{id}/open');
    expect(convertedOf(second)).toEqual(Array(3).fill({ currency: 'coins', amount: 20 }));
    expect(second.meta.conversions).toEqual({ coins: 60 });
    // The replay of the same request answers the same conversions (asked of collections).
    const replay = await openChest(stack, app.key, p.token, chests[1]!, 'dupes-key');
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(documented(replay, '/api/v1/chests/{id}/open')).toMatchObject({ data: second.data, meta: { conversions: { coins: 60 } } });

    const audit = documented(await get(p, '/api/v1/players/me/openings'), '/api/v1/players/me/openings');
    expectJsonApi(audit);
    expect(audit.data.map((o: any) => [o.id, o.attributes.conversions])).toEqual([
      [second.meta.opening_id, { coins: 60 }],
      [first.meta.opening_id, { coins: 20 }],
    ]);
    expect(audit.data[1].attributes.collectibles[2].meta).toEqual({ converted: { currency: 'coins', amount: 20 } });

    const item = documented(await get(p, '/api/v1/collectibles/dupe-common'), '/api/v1/collectibles/{id}');
    expect(item.meta).toMatchObject({ copies_owned: 2, owned_count: 2 });
    // The credits land in the wallet through their own durable message: initial 1000 + welcome 500 + 80.
    await eventually(async () => {
      const coins = (await get(p, '/api/v1/currencies')).json().data.find((c: any) => c.attributes.code === 'coins');
      expect(coins.attributes.balance.amount).toBe('1580.00');
    });
  });

  it("shows each opening's conversions in a batch open", async () => {
    const { p, chests } = await newPlayer(1);
    const res = await stack.inject({
      method: 'POST',
      url: '/api/v1/chests/open',
      headers: jsonApiHeaders(app.key, p.token),
      payload: { data: chests.map((id) => ({ type: 'chest', id })) },
    });
    const body = documented(res, '/api/v1/chests/open', 'post');
    expect(body.data.map((o: any) => o.meta.conversions)).toEqual([{ coins: 20 }, { coins: 60 }]);
    expect(body.data[0].collectibles.map((c: any) => c.meta?.converted ?? null)).toEqual([null, null, { currency: 'coins', amount: 20 }]);
  });

  it('leaves out the conversions of an answer collections did not confirm, and the audit shows them once applied', async () => {
    const { p, chests } = await newPlayer(0);
    await stack.stopService('collections');
    let opened;
    try {
      opened = documented(await openChest(stack, app.key, p.token, chests[0]!), '/api/v1/chests/{id}/open');
      expect(opened.meta.message).toMatch(/on their way/);
      expect(opened.meta.conversions).toBeUndefined();
      expect(convertedOf(opened)).toEqual([null, null, null]);
      // Not known while collections is away: null, not {}.
      const audit = documented(await get(p, '/api/v1/players/me/openings'), '/api/v1/players/me/openings');
      expect(audit.data[0].attributes.conversions).toBeNull();
    } finally {
      await stack.startService('collections');
    }
    await eventually(async () => {
      const audit = documented(await get(p, '/api/v1/players/me/openings'), '/api/v1/players/me/openings');
      expect(audit.data[0].attributes.conversions).toEqual({ coins: 20 });
    }, 20_000);
  });
});
