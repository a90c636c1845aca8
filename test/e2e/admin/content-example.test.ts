import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, jsonApiHeaders, startStack, type TestStack } from '../../support/stack.js';
import { expectError, expectJsonApi } from '../../support/jsonapi-schema.js';
import { registerPlayer, wallet, waitForStarterChest, type Player } from '../../../services/chests/test/support/chests.js';
import { runAdminIn } from '../../../tools/admin/test/support/run-admin.js';

const DOC = new URL('../../../docs/content.md', import.meta.url);

/**
 * The whole content file docs/content.md opens with ("A whole content file"): the first JSON block
 * of that section, taken from the page itself so that the page and this test cannot drift apart.
 */
function docsExample(): string {
  const page = readFileSync(DOC, 'utf8');
  const section = page.indexOf('\n## A whole content file\n');
  expect(section, 'docs/content.md has the section "A whole content file"').toBeGreaterThan(0);
  const block = /```json\n([^]*?)\n```/.exec(page.slice(section));
  expect(block, 'a ```json block in it').not.toBeNull();
  return block![1]!;
}

// The example content of docs/content.md, loaded as a reader would (`npm run admin -- create-app
// --content`), and every part of it checked through the API: currencies, the collection, the chest
// types and their prices, the banner (its price per pull and featured name), the store product, the
// compliance rules, and what a new player gets (enough for one pull of the banner).
describe('the example content file of docs/content.md', () => {
  let stack: TestStack;
  let dir: string;
  let app: { appId: string; publishableKey: string; secretKey: string };

  beforeAll(async () => {
    stack = await startStack();
    dir = mkdtempSync(path.join(tmpdir(), 'ccs-docs-example-'));
    const file = path.join(dir, 'night-sky.json');
    writeFileSync(file, docsExample());
    const created = await runAdminIn(stack, ['create-app', '--name', 'Night Sky', '--content', file, '--json']);
    expect(created.code, created.err).toBe(0);
    const out = JSON.parse(created.out) as typeof app & { services: { service: string; status: string }[]; loaded: unknown };
    expect(out.services.map((s) => s.status)).toEqual(out.services.map(() => 'applied'));
    expect(out.loaded).toEqual({ from: 'request' });
    app = out;
  });
  afterAll(async () => {
    rmSync(dir, { recursive: true, force: true });
    await stack?.close();
  });

  /** A GET as the app's game client (its publishable key, a player's token if given), checked as JSON:API. */
  async function read(url: string, token?: string, key = app.publishableKey) {
    const res = await stack.inject({ method: 'GET', url, headers: jsonApiHeaders(key, token) });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expectJsonApi(body);
    return body;
  }

  /** A player's balances: code → amount. */
  const balances = async (p: Player) => Object.fromEntries(Object.entries(await wallet(stack, p)).map(([code, c]) => [code, c.balance]));

  it('has its currencies, collection, chest types and prices', async () => {
    const currencies = await read('/api/v1/currencies');
    expect(currencies.data.map((c: { attributes: { code: string } }) => c.attributes.code)).toEqual(['coins', 'gems']);
    const collection = await read('/api/v1/collections/night-sky?include=collectibles');
    expect(collection.data.attributes.name).toBe('Night Sky');
    expect(collection.included.map((c: { id: string }) => c.id).sort()).toEqual(['sky-comet', 'sky-dragon', 'sky-moth', 'sky-owl', 'sky-phoenix']);
    const chests = await read('/api/v1/chests');
    expect(chests.data.map((c: { attributes: { name: string }; meta: { price: unknown } }) => [c.attributes.name, c.meta.price])).toEqual([
      ['Bronze Chest', { coins: 300 }],
      ['Star Chest', { coins: 800, gems: 10 }],
    ]);
  });

  it('has its banner, store product and compliance rules, and a new player can pull the banner once', async () => {
    const banners = await read('/api/v1/banners');
    expect(banners.data).toHaveLength(1);
    expect(banners.data[0]).toMatchObject({
      id: 'phoenix-rising',
      attributes: {
        name: 'Phoenix Rising',
        active: true,
        featured: { rarity: 'legendary', collectibles: ['sky-phoenix'], names: ['Phoenix'], share: 0.5 },
        spark: { cost: 30, currency: null },
        price_per_pull: { coins: 800, gems: 10 },
      },
    });
    const products = await read('/api/v1/admin/store/products', undefined, app.secretKey);
    expect(products.data.map((p: { id: string; attributes: { apple_product_id: string } }) => [p.id, p.attributes.apple_product_id])).toEqual([
      ['gems-100', 'com.example.nightsky.gems_100'],
    ]);

    // What registration gives: the Bronze Chest, 1,000 coins and 10 gems.
    const p: Player = await registerPlayer(stack, app.publishableKey);
    await waitForStarterChest(stack, p);
    await eventually(async () => expect(await balances(p)).toEqual({ coins: '1000.00', gems: '10.00' }));
    const pull = (currency: string) =>
      stack.inject({
        method: 'POST',
        url: '/api/v1/banners/phoenix-rising/pull',
        headers: jsonApiHeaders(p.apiKey, p.token),
        payload: { data: { type: 'pull', attributes: { count: 1, currency } } },
      });
    // Gems are paid: a player who has not declared a country is refused them (compliance), with nothing debited.
    const [gated] = expectError(await pull('gems'), 403, 'blocked_in_region');
    expect((gated as { meta?: { reason?: string } }).meta?.reason).toBe('country_unknown');
    const pulled = await pull('coins');
    expect(pulled.statusCode, pulled.body).toBe(200);
    expect(pulled.json().meta).toMatchObject({ banner_id: 'phoenix-rising', pulls: 1, price_paid: { coins: 800 } });
    expect((await balances(p)).gems).toBe('10.00');
  });
});
