/**
 * The compliance profile (docs/content.md, "Compliance") through the gateway, against real
 * Postgres, NATS and Redis. The demo content makes gems a paid currency, blocks BE and NL and sets
 * a minimum age of 18; coins are not paid. A matrix of region × age × currency: each refused
 * purchase is a 403 with its reason and leaves balances, inventory, purchases and ledger as they
 * were; the catalog's `meta.purchasable` agrees with the purchase, per caller, and is never served
 * from or stored into the gateway's shared reply cache.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AdminCreateApp, readContentFile } from '@ccs/shared';
import { eventually, type TestStack, startStack } from '../../../test/support/stack.js';
import { expectError } from '../../../test/support/jsonapi-schema.js';
import { appIdOf, catalogIds, defaultCatalogIds, inventory, purchase, sql, waitForStarterChest, wallet, type Player } from './support/chests.js';
import { catalogMeta, patchMe, registerDeclaring, type Declared } from './support/compliance.js';

const THIS_YEAR = new Date().getUTCFullYear();
/** Birth years, by what the gate must conclude from them (a birth year alone: this year's birthday assumed not yet passed). */
const AGES: Record<string, { birth_year?: number; adult: boolean | 'unknown' }> = {
  adult: { birth_year: THIS_YEAR - 30, adult: true },
  minor: { birth_year: THIS_YEAR - 15, adult: false },
  'turns 18 this year': { birth_year: THIS_YEAR - 18, adult: false },
  'turned 18 last year': { birth_year: THIS_YEAR - 19, adult: true },
  'no birth year': { adult: 'unknown' },
};
/** Countries as players type them (`nl` is stored as NL). */
const REGIONS: Record<string, { country?: string; blocked: boolean | 'unknown' }> = {
  BE: { country: 'BE', blocked: true },
  nl: { country: 'nl', blocked: true },
  DE: { country: 'DE', blocked: false },
  'no country': { blocked: 'unknown' },
};

/** What buying with gems must answer for a profile: 201, or the 403's code and meta.reason. */
function expectedForGems(region: (typeof REGIONS)[string], age: (typeof AGES)[string]): { code: string; reason: string } | 'allowed' {
  if (region.blocked === 'unknown') return { code: 'blocked_in_region', reason: 'country_unknown' };
  if (region.blocked) return { code: 'blocked_in_region', reason: 'country_blocked' };
  if (age.adult === 'unknown') return { code: 'age_restricted', reason: 'birth_year_unknown' };
  if (!age.adult) return { code: 'age_restricted', reason: 'under_min_age' };
  return 'allowed';
}

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

  /** The balances, inventory, purchases and ledger rows of a player: what a refused purchase must not change. */
  async function stateOf(p: Player) {
    const w = await wallet(stack, p);
    return {
      coins: w.coins!.balance,
      gems: w.gems!.balance,
      chests: (await inventory(stack, p)).meta.total_chests,
      purchases: (await sql(stack, "SELECT count(*)::int AS n FROM chests.payments WHERE kind = 'purchase' AND player_id = $1", [p.id]))[0]!.n,
      debits: (await sql(stack, "SELECT count(*)::int AS n FROM wallet.ledger WHERE player_id = $1 AND reason = 'debit'", [p.id]))[0]!.n,
    };
  }

  const cells = Object.entries(REGIONS).flatMap(([region, r]) => Object.entries(AGES).map(([age, a]) => ({ region, r, age, a })));

  it(
    'region × age × currency: paid gems refused by region, then age (unknown refused); coins allowed everywhere; nothing debited when refused',
    { timeout: 120_000 },
    async () => {
      expect(cells).toHaveLength(20);
      const outcomes: string[] = [];
      const run = async ({ region, r, age, a }: (typeof cells)[number], i: number) => {
        const declared: Declared = { ...(r.country ? { country: r.country } : {}), ...(a.birth_year ? { birth_year: a.birth_year } : {}) };
        // Half declare at registration, half with PATCH /players/me afterwards: the gates see no difference.
        const p = await newPlayer(declared, i % 2 ? 'patch' : 'register');
        const expected = expectedForGems(r, a);
        const allowed = expected === 'allowed';

        // The catalog tells the player beforehand, per price currency.
        const { meta } = await catalogMeta(stack, p);
        expect(meta['Silver Chest']!.purchasable, `${region}/${age}`).toEqual({ coins: true, gems: allowed });
        expect(meta['Golden Chest']!.purchasable, `${region}/${age}`).toEqual({ gems: allowed });
        expect(meta['Wooden Chest']!.purchasable, `${region}/${age}`).toEqual({ coins: true });

        const before = await stateOf(p);
        const gems = await purchase(stack, p, ids['Silver Chest']!, 'gems');
        if (allowed) {
          expect(gems.statusCode, gems.body).toBe(201);
          expect(gems.json().meta.balance).toEqual({ gems: '0.00' });
        } else {
          const [error] = expectError(gems, 403, expected.code);
          expect((error as { meta?: Record<string, unknown> }).meta?.reason, `${region}/${age}`).toBe(expected.reason);
          expect(await stateOf(p), `${region}/${age}: nothing changed`).toEqual(before);
        }
        const coins = await purchase(stack, p, ids['Wooden Chest']!, 'coins');
        expect(coins.statusCode, `${region}/${age} coins: ${coins.body}`).toBe(201);
        outcomes.push(`${region}/${age}: gems ${allowed ? 201 : 403}, coins 201`);
      };
      // A few players at a time: registrations hash passwords, and the machine is small.
      for (let i = 0; i < cells.length; i += 4) await Promise.all(cells.slice(i, i + 4).map((c, j) => run(c, i + j)));
      expect(outcomes.filter((o) => o.includes('gems 201')).sort()).toEqual([
        'DE/adult: gems 201, coins 201',
        'DE/turned 18 last year: gems 201, coins 201',
      ]);
    },
  );

  it(
    'reads the current profile at each purchase: a blocked region is locked (403 country_locked); a birth year cannot move earlier to pass the age gate',
    { timeout: 60_000 },
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
    'with players unreachable: the catalog still answers (without meta.purchasable), gems cannot be sold, coins still can',
    { timeout: 60_000 },
    async () => {
      const p = await newPlayer({ country: 'DE', birth_year: THIS_YEAR - 30 });
      expect((await catalogMeta(stack, p)).meta['Silver Chest']!.purchasable).toEqual({ coins: true, gems: true });
      await stack.stopService('players');
      try {
        // The API key and the token's signing key are cached by the gateway; the profile is not.
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

  it('an app whose content has no compliance rules sells gems to players who declared nothing', { timeout: 60_000 }, async () => {
    const { compliance: _none, ...content } = readContentFile();
    const app = await stack.bus.request(AdminCreateApp, { name: 'No compliance', content }, { requestId: 'compliance-test-app' });
    await eventually(async () => expect(Object.keys(await catalogIds(stack, app.publishableKey))).toHaveLength(content.chests.length), 20_000);
    const otherIds = await catalogIds(stack, app.publishableKey);
    const p = await newPlayer({}, 'register', app.publishableKey);
    expect((await catalogMeta(stack, p, app.publishableKey)).meta['Golden Chest']!.purchasable).toEqual({ gems: true });
    const res = await purchase(stack, p, otherIds['Silver Chest']!, 'gems');
    expect(res.statusCode, res.body).toBe(201);
    expect(await appIdOf(stack, app.publishableKey)).toBe(app.appId);
  });
});
