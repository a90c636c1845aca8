/**
 * The compliance profile (docs/content.md, "Compliance") through the gateway, against real
 * Postgres, NATS and Redis: a declared profile read at each purchase (and locked where players
 * locks it), the catalog's `meta.purchasable` per caller, never served from or stored into the
 * gateway's shared reply cache, and purchases with players unreachable. The region × age ×
 * currency matrix and an app without compliance rules are chests' own
 * (services/chests/test/compliance.test.ts, service tier).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, type TestStack, startStack } from '../../support/stack.js';
import { expectError } from '../../support/jsonapi-schema.js';
import { appIdOf, defaultCatalogIds, purchase, waitForStarterChest, wallet, type Player } from '../../../services/chests/test/support/chests.js';
import { catalogMeta, patchMe, registerDeclaring, type Declared } from '../../../services/chests/test/support/compliance.js';

const THIS_YEAR = new Date().getUTCFullYear();

describe('compliance profile: region and age gates on paid currencies', () => {
  let stack: TestStack;
  let ids: Record<string, string>;

  beforeAll(async () => {
    // The reply cache on for long enough that a wrongly shared per-player answer would show.
    stack = await startStack({ env: { REPLY_CACHE_TTL_MS: '60000' } });
    ids = await defaultCatalogIds(stack);
  });
  afterAll(async () => stack?.close());

  /** Registers a player declaring `declared` and waits for the welcome grants (1500 coins, 15 gems, the starter chest). */
  async function newPlayer(declared: Declared, via: 'register' | 'patch' = 'register', apiKey = stack.apiKey): Promise<Player> {
    const p = await registerDeclaring(stack, declared, via, apiKey);
    await waitForStarterChest(stack, p);
    await eventually(async () => expect((await wallet(stack, p)).gems?.balance).toBe('15.00'), 20_000);
    return p;
  }

  it(
    'reads the current profile at each purchase: a blocked region is locked (403 country_locked); a birth year cannot move earlier to pass the age gate',
    { timeout: 180_000 },
    async () => {
      const p = await newPlayer({ country: 'BE', birth_year: THIS_YEAR - 15 });
      expectError(await purchase(stack, p, ids['Silver Chest']!, 'gems'), 403, 'blocked_in_region');
      // Declaring another country does not leave a blocked region (docs/content.md, "A declared profile").
      expectError(await patchMe(stack, p, { country: 'de' }), 403, 'country_locked');
      expectError(await purchase(stack, p, ids['Silver Chest']!, 'gems'), 403, 'blocked_in_region');
      expect((await catalogMeta(stack, p)).meta['Golden Chest']!.purchasable).toEqual({ gems: false });

      // A minor elsewhere: refused for age, and cannot declare an older birth year afterwards.
      const m = await newPlayer({ country: 'DE', birth_year: THIS_YEAR - 15 });
      const minor = expectError(await purchase(stack, m, ids['Silver Chest']!, 'gems'), 403, 'age_restricted');
      expect(minor[0]).toMatchObject({ meta: { reason: 'under_min_age', min_age: 18 } });
      const locked = expectError(await patchMe(stack, m, { birth_year: THIS_YEAR - 30 }), 403, 'birth_year_locked');
      expect(locked[0]!.source?.pointer).toBe('/data/attributes/birth_year');
      expectError(await purchase(stack, m, ids['Silver Chest']!, 'gems'), 403, 'age_restricted');
      expect((await wallet(stack, m)).gems!.balance).toBe('15.00');

      // An adult who had not declared a country is refused until they do, then can buy at once.
      const q = await newPlayer({ birth_year: THIS_YEAR - 40 }, 'patch');
      const unknown = expectError(await purchase(stack, q, ids['Silver Chest']!, 'gems'), 403, 'blocked_in_region');
      expect(unknown[0]).toMatchObject({ meta: { reason: 'country_unknown' } });
      expect((await patchMe(stack, q, { country: 'AT' })).statusCode).toBe(200);
      expect((await catalogMeta(stack, q)).meta['Silver Chest']!.purchasable).toEqual({ coins: true, gems: true });
      expect((await purchase(stack, q, ids['Silver Chest']!, 'gems')).statusCode).toBe(201);
    },
  );

  it('catalog: meta.purchasable only with a token, per caller, never from or into the shared reply cache', async () => {
    const blocked = await registerDeclaring(stack, { country: 'BE', birth_year: THIS_YEAR - 30 }, 'register');
    const allowed = await registerDeclaring(stack, { country: 'FR', birth_year: THIS_YEAR - 30 }, 'register');
    const golden = ids['Golden Chest']!;
    const getChest = (p?: Player) =>
      stack.inject({
        method: 'GET',
        url: `/api/v1/chests/${golden}`,
        headers: { apikey: stack.apiKey, accept: 'application/vnd.api+json', ...(p ? { authorization: `Bearer ${p.token}` } : {}) },
      });

    // Interleaved: anonymous, blocked, anonymous, allowed, blocked; list and single chest alike.
    const anon1 = await catalogMeta(stack);
    expect(stack.app.replyCache.size).toBeGreaterThan(0);
    const b1 = await catalogMeta(stack, blocked);
    const anon2 = await catalogMeta(stack);
    const a1 = await catalogMeta(stack, allowed);
    const b2 = await catalogMeta(stack, blocked);
    for (const anon of [anon1, anon2]) {
      expect(anon.res.headers['cache-control']).toBeUndefined();
      for (const m of Object.values(anon.meta)) expect(m).not.toHaveProperty('purchasable');
    }
    for (const b of [b1, b2]) {
      expect(b.res.headers['cache-control']).toBe('private, no-store');
      expect(b.meta['Golden Chest']!.purchasable).toEqual({ gems: false });
      expect(b.meta['Abyssal Chest']!.purchasable).toEqual({ coins: true, gems: false });
    }
    expect(a1.meta['Golden Chest']!.purchasable).toEqual({ gems: true });
    expect(a1.meta['Abyssal Chest']!.purchasable).toEqual({ coins: true, gems: true });

    const one = await Promise.all([getChest(), getChest(blocked), getChest(allowed), getChest()]);
    expect(one.map((r) => r.json().data.meta.purchasable)).toEqual([undefined, { gems: false }, { gems: true }, undefined]);
    expect(one.map((r) => r.headers['cache-control'])).toEqual([undefined, 'private, no-store', 'private, no-store', undefined]);
  });

  it(
    "with players unreachable: the catalog still answers (flags from the gateway's memory, then without meta.purchasable), gems cannot be sold, coins still can",
    { timeout: 180_000 },
    async () => {
      const p = await newPlayer({ country: 'DE', birth_year: THIS_YEAR - 30 });
      expect((await catalogMeta(stack, p)).meta['Silver Chest']!.purchasable).toEqual({ coins: true, gems: true });
      const appId = await appIdOf(stack);
      await stack.stopService('players');
      try {
        // The flags just read are in the gateway's memory (PURCHASE_FLAGS_TTL_MS): no hop to
        // chests or players. Only advice: the purchase below is refused all the same.
        expect((await catalogMeta(stack, p)).meta['Silver Chest']!.purchasable).toEqual({ coins: true, gems: true });
        // Once forgotten (the TTL passed), the restrictions cannot be read: the catalog answers
        // without them. The API key and the token's signing key are cached by the gateway; the profile is not.
        stack.app.purchaseFlags.forget(appId, p.id);
        const { res, meta } = await catalogMeta(stack, p);
        expect(res.headers['cache-control']).toBe('private, no-store');
        expect(meta['Silver Chest']).not.toHaveProperty('purchasable');
        const gems = await purchase(stack, p, ids['Silver Chest']!, 'gems');
        expect(gems.statusCode, gems.body).toBeGreaterThanOrEqual(503);
        expect((await wallet(stack, p)).gems!.balance).toBe('15.00');
        expect((await purchase(stack, p, ids['Wooden Chest']!, 'coins')).statusCode).toBe(201);
      } finally {
        await stack.startService('players');
      }
      expect((await purchase(stack, p, ids['Silver Chest']!, 'gems')).statusCode).toBe(201);
    },
  );
});
