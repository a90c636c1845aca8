import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AdminLoadContent, odds, readContentFile, chestTypeId } from '@ccs/shared';
import { startStack, type TestStack } from '../../support/stack.js';
import { expectError, expectJsonApi } from '../../support/jsonapi-schema.js';
import {
  appIdOf,
  createApp,
  get,
  defaultCatalogIds,
  grantChests,
  open,
  registerPlayer,
  sql,
  waitForStarterChest,
} from '../../../services/chests/test/support/chests.js';

const content = readContentFile();
const VERIFIER = fileURLToPath(new URL('../../../scripts/verify-opening.mjs', import.meta.url));
const names = (body: { data: { attributes: { name: string } }[] }) => body.data.map((c) => c.attributes.name);
/** A resource's self link: its canonical path, absolute on the request's host. */
const selfAt = (path: string) => ({ self: expect.stringMatching(new RegExp(`^http://[^/]+${path}$`)) });

// The catalog through the gateway: its documents, filters, sorts, pages, fields and odds as
// rendered, and the gateway's validation. The catalog's cache, app isolation and a new content
// version replacing it are chests' own (services/chests/test/catalog.test.ts, service tier).
describe('chest catalog', () => {
  let stack: TestStack;
  let appId: string;
  let ids: Record<string, string>;

  beforeAll(async () => {
    stack = await startStack();
    appId = await appIdOf(stack);
    ids = await defaultCatalogIds(stack);
  });
  afterAll(async () => stack?.close());

  async function list(query: string) {
    const res = await get(stack, `/api/v1/chests${query}`);
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expectJsonApi(body);
    return body;
  }

  it('lists every chest type of the default content with prices, empty relationships and pagination meta', async () => {
    const body = await list('');
    expect(body.data).toHaveLength(content.chests.length);
    expect(body.meta).toEqual({ total_count: content.chests.length, page: { limit: 20, offset: 0 } });
    for (const [i, chest] of content.chests.entries()) {
      expect(body.data[i]).toEqual({
        type: 'chest',
        id: chestTypeId(appId, chest.id),
        attributes: { name: chest.name, description: chest.description, images: chest.images },
        relationships: {},
        links: selfAt(`/api/v1/chests/${chestTypeId(appId, chest.id)}`),
        meta: {
          ...(chest.requires_key ? { requires_key: chest.requires_key } : {}),
          ...(chest.unlock ? { unlock: chest.unlock } : {}),
          price: chest.price,
        },
      });
    }
    expect(body.data.find((c: { id: string }) => c.id === ids['Silver Chest']).meta.price).toEqual({ coins: 1500, gems: 15 });
    expect(body.links.self).toMatch(/^http:\/\/[^/]+\/api\/v1\/chests\?page%5Blimit%5D=20&page%5Boffset%5D=0$/);
    expect(body.links.prev).toBeNull();
    expect(body.links.next).toBeNull();
  });

  it('paginates with page[limit] and page[offset], total_count and links', async () => {
    const total = content.chests.length;
    const body = await list('?page[limit]=2&page[offset]=2&sort=name');
    expect(names(body)).toEqual(
      content.chests
        .map((c) => c.name)
        .sort()
        .slice(2, 4),
    );
    expect(body.meta).toEqual({ total_count: total, page: { limit: 2, offset: 2 } });
    expect(body.links.prev).toContain('page%5Boffset%5D=0');
    expect(body.links.next).toContain('page%5Boffset%5D=4');
    expect(body.links.last).toContain(`page%5Boffset%5D=${Math.floor((total - 1) / 2) * 2}`);
    expect(body.links.self).toContain('sort=name');
    const past = await list('?page[offset]=10');
    expect(past.data).toEqual([]);
    expect(past.meta.total_count).toBe(total);
  });

  it('sorts by id, name and description, ascending or descending, on several fields', async () => {
    const sortedNames = content.chests.map((c) => c.name).sort();
    expect(names(await list('?sort=name'))).toEqual(sortedNames);
    expect(names(await list('?sort=-name'))).toEqual([...sortedNames].reverse());
    const byId = (await list('?sort=-id')).data.map((c: { id: string }) => c.id);
    expect(byId).toEqual([...byId].sort().reverse());
    const descriptions = (await list('?sort=description,-id')).data.map((c: { attributes: { description: string } }) => c.attributes.description);
    expect(descriptions).toEqual([...descriptions].sort());
  });

  it('filters by equality, comma lists, operators and nested and/or/not', async () => {
    expect(names(await list('?filter[name]=Silver Chest'))).toEqual(['Silver Chest']);
    expect(names(await list('?filter[name]=Silver Chest,Golden Chest&sort=name'))).toEqual(['Golden Chest', 'Silver Chest']);
    const all = content.chests.map((c) => c.name);
    const chestNamed = all.filter((n) => n.toLowerCase().includes('chest')).sort();
    expect(names(await list('?filter[name][contains]=CHEST&sort=name'))).toEqual(chestNamed);
    expect(names(await list('?filter[name][starts_with]=me'))).toEqual(['Mecha Crate']);
    expect(names(await list('?filter[name][in]=Mecha Crate,Wooden Chest&sort=-name'))).toEqual(['Wooden Chest', 'Mecha Crate']);
    expect((await list(`?filter[id][ne]=${ids['Wooden Chest']}`)).meta.total_count).toBe(all.length - 1);
    expect(names(await list(`?filter[id]=${ids['Golden Chest']}`))).toEqual(['Golden Chest']);
    const or = await list('?filter[or][0][name]=Mecha Crate&filter[or][1][description][contains]=legendary&sort=name');
    expect(names(or)).toEqual(['Golden Chest', 'Mecha Crate']);
    expect(names(await list('?filter[not][name][contains]=chest'))).toEqual(all.filter((n) => !chestNamed.includes(n)));
    const nested = await list(
      '?filter[and][0][name][contains]=chest&filter[and][1][not][or][0][name]=Wooden Chest&filter[and][1][not][or][1][name]=Silver Chest&sort=name',
    );
    expect(names(nested)).toEqual(chestNamed.filter((n) => n !== 'Wooden Chest' && n !== 'Silver Chest'));
    expect((await list('?filter[name]=nothing like it')).meta).toEqual({ total_count: 0, page: { limit: 20, offset: 0 } });
    // LIKE wildcards in a value are literal characters.
    expect((await list('?filter[name][contains]=%25')).data).toEqual([]);
  });

  it('selects fields with fields[chest]', async () => {
    const body = await list('?fields[chest]=name,images');
    expect(Object.keys(body.data[0].attributes).sort()).toEqual(['images', 'name']);
    expect(body.data[0].meta.price).toBeDefined();
    const ids = await list('?fields[chest]=id');
    expect(ids.data[0].attributes).toEqual({});
  });

  it.each([
    ['include=collectibles', 'unsupported_include'],
    ['sort=price', 'unsupported_sort'],
    ['fields[chest]=price', 'unsupported_fields'],
    ['fields[collectible]=name', 'unsupported_fields'],
    ['filter[price]=5', 'invalid_filter'],
    ['filter[name][gt]=a', 'invalid_filter'],
    ['filter[a][b][c]=1', 'invalid_filter'],
    ['filter[not][not][not][not][name]=x', 'invalid_filter'],
    ['filter=plain', 'invalid_filter'],
    ['page[limit]=0', 'invalid_page'],
    ['page[limit]=101', 'invalid_page'],
    ['page[offset]=-1', 'invalid_page'],
    ['page[size]=3', 'invalid_parameter'],
    ['color=red', 'unknown_parameter'],
  ])('answers 400 to %s', async (query, code) => {
    const res = await get(stack, `/api/v1/chests?${query}`);
    const errors = expectError(res, 400, code);
    expect(errors[0]!.source?.parameter).toBeDefined();
  });

  it('answers 400 to a filter with more values than allowed', async () => {
    const many = Array.from({ length: 101 }, (_, i) => `n${i}`).join(',');
    expectError(await get(stack, `/api/v1/chests?filter[name]=${many}`), 400, 'invalid_filter');
  });

  it('answers 401 without an apikey and with an unknown one', async () => {
    expectError(await stack.inject({ method: 'GET', url: '/api/v1/chests' }), 401, 'missing_api_key');
    expectError(await get(stack, '/api/v1/chests', undefined, 'nope-not-a-key'), 401, 'invalid_api_key');
  });

  it('shows one chest with fields and an empty meta', async () => {
    const res = await get(stack, `/api/v1/chests/${ids['Golden Chest']}`);
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expectJsonApi(body);
    expect(body).toEqual({
      data: {
        type: 'chest',
        id: ids['Golden Chest'],
        attributes: { name: 'Golden Chest', description: content.chests[2]!.description, images: content.chests[2]!.images },
        relationships: {},
        links: selfAt(`/api/v1/chests/${ids['Golden Chest']}`),
        meta: { price: { gems: 50 } },
      },
      meta: {},
    });
    const sparse = (await get(stack, `/api/v1/chests/${ids['Golden Chest']}?fields[chest]=description`)).json();
    expect(sparse.data.attributes).toEqual({ description: content.chests[2]!.description });
  });

  it('answers 400 for a malformed id, 404 for an unknown one, 400 for include', async () => {
    expectError(await get(stack, '/api/v1/chests/not-a-uuid'), 400, 'invalid_id');
    expectError(await get(stack, '/api/v1/chests/00000000-0000-4000-8000-000000000000'), 404, 'chest_not_found');
    expectError(await get(stack, `/api/v1/chests/${ids['Golden Chest']}?include=items`), 400, 'unsupported_include');
    expectError(await get(stack, `/api/v1/chests/${ids['Golden Chest']}?sort=name`), 400, 'unsupported_sort');
    expectError(await get(stack, '/api/v1/chests/not-a-uuid/odds'), 400, 'invalid_id');
    expectError(await get(stack, '/api/v1/chests/00000000-0000-4000-8000-000000000000/odds'), 404, 'chest_not_found');
  });

  it('keeps a public, hash-chained odds log: an entry per chest type or banner whose rules a content version changes, verifiable by anyone', async () => {
    // An app of its own, so this test alone loads its content versions.
    const app = await createApp(stack, structuredClone(content));
    const log = async () => {
      const res = await get(stack, '/api/v1/odds-log?page[limit]=100', undefined, app.publishableKey);
      expect(res.statusCode, res.body).toBe(200);
      const body = res.json();
      expectJsonApi(body);
      return body;
    };
    const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');
    const canonical = (v: unknown): string =>
      Array.isArray(v)
        ? `[${v.map(canonical).join(',')}]`
        : v !== null && typeof v === 'object'
          ? `{${Object.keys(v)
              .sort()
              .map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`)
              .join(',')}}`
          : JSON.stringify(v);
    /** The odds document whose rules an entry hashes: a chest's at its rules version, a banner's (its rules unchanged here). */
    const oddsOf = async (a: Record<string, string | number>) =>
      (
        await get(
          stack,
          a.banner_id === undefined
            ? `/api/v1/chests/${a.chest_type_id}/odds?rules_version=${a.rules_version}`
            : `/api/v1/banners/${a.banner_id}/odds`,
          undefined,
          app.publishableKey,
        )
      ).json();
    /** Recomputes the whole chain and each entry's rules hash from the public odds endpoints. */
    const verify = async (entries: { id: string; attributes: Record<string, string | number> }[]) => {
      let previous = '0'.repeat(64);
      for (const [i, e] of entries.entries()) {
        const a = e.attributes;
        expect(e.id).toBe(String(i + 1));
        expect(a.previous_hash).toBe(previous);
        const subject = a.banner_id === undefined ? a.chest_type_id : `banner:${a.banner_id}:`;
        expect(a.entry_hash).toBe(sha256(`${a.previous_hash}${a.rules_sha256}${subject}${a.rules_version}${a.effective_at}`));
        const oddsDoc = await oddsOf(a);
        expect(a.rules_sha256).toBe(
          sha256(canonical(a.banner_id === undefined ? oddsDoc.data.attributes.rules : oddsDoc.data.attributes.banner_rules)),
        );
        previous = String(a.entry_hash);
      }
    };
    /** The log once it holds at least `n` entries (each service applies a content version on its own, moments after the load). */
    const logWith = async (n: number) => {
      for (let i = 0; i < 200; i++) {
        const b = await log();
        if (b.meta.total_count >= n) return b;
        await new Promise((r) => setTimeout(r, 100));
      }
      throw new Error(`the odds log did not reach ${n} entries`);
    };
    // Version 1: every chest type, then every banner.
    const logged = content.chests.length + content.banners!.length;
    const first = await logWith(logged);
    expect(first.meta.total_count).toBe(logged);
    expect(first.data.map((e: { attributes: { rules_version: number } }) => e.attributes.rules_version)).toEqual(first.data.map(() => 1));
    expect(first.data.slice(content.chests.length).map((e: { attributes: { banner_id: string } }) => e.attributes.banner_id)).toEqual(
      content.banners!.map((b) => b.slug),
    );
    await verify(first.data);
    // Version 2 changes one chest's rules (and another's price only): one entry, chained on.
    const next = structuredClone(content);
    next.players.player_credit_allowed = false;
    const wooden = next.chests.find((c) => c.id === 'wooden-chest')!;
    wooden.rules.items = { min: 2, max: 4 } as typeof wooden.rules.items;
    next.chests.find((c) => c.id === 'silver-chest')!.price = { coins: 1400, gems: 15 };
    const { version } = await stack.bus.request(AdminLoadContent, { appId: app.appId, content: next }, { requestId: randomUUID() });
    const second = await logWith(logged + 1);
    expect(second.meta.total_count).toBe(logged + 1);
    const added = second.data.at(-1);
    expect(added.attributes).toMatchObject({
      chest_type_id: (await get(stack, '/api/v1/chests?page[limit]=100', undefined, app.publishableKey))
        .json()
        .data.find((c: { attributes: { name: string } }) => c.attributes.name === 'Wooden Chest').id,
      rules_version: version,
    });
    // History unchanged, chain intact.
    expect(second.data.slice(0, first.data.length)).toEqual(first.data);
    await verify(second.data);

    // Offline, as an auditor would: the saved log and odds documents, checked by the verifier with
    // nothing but Node's own crypto; a tampered entry is found and named.
    const dir = await mkdtemp(join(tmpdir(), 'odds-log-'));
    try {
      await writeFile(join(dir, 'log.json'), JSON.stringify(second));
      for (const e of second.data) {
        const a = e.attributes;
        const name = a.banner_id === undefined ? `${a.chest_type_id}.${a.rules_version}` : `banner-${a.banner_id}.${a.rules_version}`;
        await writeFile(join(dir, `${name}.json`), JSON.stringify(await oddsOf(a)));
      }
      const verifier = (file: string) =>
        spawnSync(process.execPath, [VERIFIER, '--odds-log', join(dir, file), '--odds-dir', dir], { encoding: 'utf8' });
      const ok = verifier('log.json');
      expect(ok.status, ok.stderr).toBe(0);
      expect(JSON.parse(ok.stdout)).toEqual({
        entries: second.data.length,
        verified: second.data.length,
        broken: [],
        rules_checked: second.data.length,
      });
      const tampered = structuredClone(second);
      tampered.data[2].attributes.rules_version = 2;
      await writeFile(join(dir, 'tampered.json'), JSON.stringify(tampered));
      const bad = verifier('tampered.json');
      expect(bad.status).toBe(1);
      expect(JSON.parse(bad.stdout).broken[0].seq).toBe(3);
      expect(bad.stderr).toMatch(/chain is broken at entry 3/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('shows in public what real openings drew against the disclosed odds, per rules version, with a chi-square p-value', async () => {
    const wooden = ids['Wooden Chest']!;
    const observed = async (query = '') => {
      const res = await get(stack, `/api/v1/chests/${wooden}/odds/observed${query}`);
      expect(res.statusCode, res.body).toBe(200);
      expect(res.headers['cache-control']).toBe('no-store');
      const body = res.json();
      expectJsonApi(body);
      return body.data;
    };
    const p = await registerPlayer(stack);
    await waitForStarterChest(stack, p);
    for (const chest of [p.starterChestId, ...(await grantChests(stack, p, 'wooden-chest', 4))])
      expect((await open(stack, p, chest)).statusCode).toBe(200);

    const data = await observed();
    expect(data).toMatchObject({ type: 'chest_observed_odds', id: wooden, relationships: {} });
    const a = data.attributes;
    // The counts are the app's kept openings of this chest under its current rules, as stored.
    const rows = await sql<{ openings: number; items: number }>(
      stack,
      `SELECT count(*)::int AS openings, coalesce(sum(jsonb_array_length(items)), 0)::int AS items
         FROM chests.openings WHERE app_id = $1 AND chest_type_id = $2 AND content_version = $3`,
      [appId, wooden, a.rules_version],
    );
    expect({ openings: a.openings, items: a.items }).toEqual(rows[0]);
    expect(a.openings).toBeGreaterThanOrEqual(5);
    const disclosed = (await get(stack, `/api/v1/chests/${wooden}/odds`)).json().data.attributes.pity;
    const shares = disclosed ? disclosed.effective_rarities : (await get(stack, `/api/v1/chests/${wooden}/odds`)).json().data.attributes.rarities;
    for (const s of shares) expect(a.rarities.find((r: { rarity: string }) => r.rarity === s.rarity)?.disclosed).toBeCloseTo(s.probability, 12);
    expect(a.rarities.reduce((n: number, r: { count: number }) => n + r.count, 0)).toBe(a.items);
    for (const r of a.rarities) expect(r.observed).toBeCloseTo(r.count / a.items, 12);
    expect(a.chi_square_p_value).toBeGreaterThanOrEqual(0);
    expect(a.chi_square_p_value).toBeLessThanOrEqual(1);
    // The same version asked by number; an unknown one is 404, a malformed one 400.
    expect((await observed(`?rules_version=${a.rules_version}`)).attributes).toEqual(a);
    expectError(await get(stack, `/api/v1/chests/${wooden}/odds/observed?rules_version=999`), 404, 'rules_version_not_found');
    expectError(await get(stack, `/api/v1/chests/${wooden}/odds/observed?rules_version=x`), 400);
  });

  it('discloses the exact odds computed from the rules the roll uses', async () => {
    const p12 = (x: number) => Number(x.toPrecision(15));
    for (const chest of content.chests) {
      const res = await get(stack, `/api/v1/chests/${ids[chest.name]}/odds`);
      expect(res.statusCode, res.body).toBe(200);
      const body = res.json();
      expectJsonApi(body);
      const expected = odds(
        chest.rules,
        content.rarities,
        content.collections.flatMap((col) => col.collectibles.map((c) => ({ id: c.id, collectionId: col.id, rarity: c.rarity }))),
      );
      expect(body.data).toEqual({
        type: 'chest_odds',
        id: ids[chest.name],
        attributes: {
          items_per_open: { ...expected.itemsPerOpen, expected: p12(expected.itemsPerOpen.expected) },
          rarities: expected.rarities.map((r) => ({ rarity: r.rarity, probability: p12(r.probability), expected_count: p12(r.expectedCount) })),
          collectibles: expected.collectibles.map((c) => ({ ...c, probability: p12(c.probability) })),
          rules_version: 1,
          // The published rules (what a verifier recomputes from), pity and the app's duplicate rules.
          rules: chest.rules,
          rule_inputs: { rarities: expect.any(Array), collectibles: expect.any(Array) },
          pity: chest.rules.pity
            ? {
                rarity: chest.rules.pity.rarity,
                hard: chest.rules.pity.hard,
                soft_start: chest.rules.pity.soft_start ?? null,
                soft_step: chest.rules.pity.soft_step ?? null,
                group: chest.id,
                effective_rarities: expect.any(Array),
              }
            : null,
          duplicates: content.duplicates,
        },
        relationships: {},
        links: selfAt(`/api/v1/chests/${ids[chest.name]}/odds`),
      });
      const sum = (xs: { probability: number }[]) => xs.reduce((s, x) => s + x.probability, 0);
      expect(sum(body.data.attributes.rarities)).toBeCloseTo(1, 12);
      expect(sum(body.data.attributes.collectibles)).toBeCloseTo(1, 12);
    }
    const silver = (await get(stack, `/api/v1/chests/${ids['Silver Chest']}/odds`)).json().data.attributes;
    expect(silver.items_per_open).toEqual({ min: 3, max: 5, expected: 4 });
    // No binary floating-point noise in what is disclosed: 65/28/7 weights, one rare+ slot of 4.
    expect(silver.rarities).toEqual([
      { rarity: 'common', probability: 0.4875, expected_count: 1.95 },
      { rarity: 'rare', probability: 0.41, expected_count: 1.64 },
      { rarity: 'legendary', probability: 0.1025, expected_count: 0.41 },
    ]);
    // Pity raises the long-run share of legendaries above the base odds: at least 1 in 10 openings gives one.
    const effectiveLegendary = silver.pity.effective_rarities.find((r: { rarity: string }) => r.rarity === 'legendary');
    expect(effectiveLegendary.probability).toBeGreaterThan(0.1025);
    expect(silver.pity.effective_rarities.reduce((s: number, r: { probability: number }) => s + r.probability, 0)).toBeCloseTo(1, 12);
    const mecha = (await get(stack, `/api/v1/chests/${ids['Mecha Crate']}/odds`)).json().data.attributes;
    expect(mecha.collectibles.map((c: { id: string }) => c.id).every((id: string) => id.startsWith('mecha-'))).toBe(true);
  });
});
