/**
 * The compliance gates (docs/content.md, "Compliance") on the service tier: chests alone, the
 * caller's declared profile answered by a players stand-in, the wallet by a wallet stand-in. The
 * demo content makes gems a paid currency, blocks BE and NL and sets a minimum age of 18; coins
 * are not paid. A matrix of region × age × currency: each refused purchase is a 403 with its
 * reason and leaves balances, inventory, purchases and debits as they were; the purchase
 * restrictions (the catalog's `meta.purchasable`) agree with the purchase. Declaring a profile
 * through players, the catalog's rendering and reply cache, and players being unreachable are end
 * to end: test/e2e/chests/compliance.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { GetInventory, GetPurchaseRestrictions, PurchaseChests, readContentFile } from '@ccs/shared';
import { callOf, chestsApp, chestsSql, startChestsTier, type ChestsTier, type ChestsTierRun } from './support/chests-tier.js';

const THIS_YEAR = new Date().getUTCFullYear();
/** Birth years, by what the gate must conclude from them (a birth year alone: this year's birthday assumed not yet passed). */
const AGES: Record<string, { birth_year?: number; adult: boolean | 'unknown' }> = {
  adult: { birth_year: THIS_YEAR - 30, adult: true },
  minor: { birth_year: THIS_YEAR - 15, adult: false },
  'turns 18 this year': { birth_year: THIS_YEAR - 18, adult: false },
  'turned 18 last year': { birth_year: THIS_YEAR - 19, adult: true },
  'no birth year': { adult: 'unknown' },
};
/** Countries as players answers them (upper case: players stores `nl` as NL). */
const REGIONS: Record<string, { country?: string; blocked: boolean | 'unknown' }> = {
  BE: { country: 'BE', blocked: true },
  nl: { country: 'NL', blocked: true },
  DE: { country: 'DE', blocked: false },
  'no country': { blocked: 'unknown' },
};

/** What buying with gems must answer for a profile: allowed, or the 403's code and meta.reason. */
function expectedForGems(region: (typeof REGIONS)[string], age: (typeof AGES)[string]): { code: string; reason: string } | 'allowed' {
  if (region.blocked === 'unknown') return { code: 'blocked_in_region', reason: 'country_unknown' };
  if (region.blocked) return { code: 'blocked_in_region', reason: 'country_blocked' };
  if (age.adult === 'unknown') return { code: 'age_restricted', reason: 'birth_year_unknown' };
  if (!age.adult) return { code: 'age_restricted', reason: 'under_min_age' };
  return 'allowed';
}

describe('compliance profile: region and age gates on paid currencies (service tier)', () => {
  let run: ChestsTierRun;
  let tier: ChestsTier;
  let app: { appId: string; types: Record<string, string> };
  beforeAll(async () => {
    run = await startChestsTier();
    tier = run.tier;
    app = await chestsApp(tier);
  });
  afterAll(async () => tier?.close());

  /** A player declaring `profile` (players' answer), holding what the welcome grants give: 1500 coins, 15 gems. */
  function newPlayer(profile: { country?: string; birth_year?: number }): string {
    const playerId = randomUUID();
    run.profiles.set(playerId, { country: profile.country ?? null, birthYear: profile.birth_year ?? null });
    run.wallet.credit(playerId, 'coins', 1500);
    run.wallet.credit(playerId, 'gems', 15);
    return playerId;
  }
  const buy = (a: typeof app, playerId: string, slug: string, currency: string) =>
    tier.bus.request(PurchaseChests, { chestTypeId: a.types[slug]!, currency, quantity: 1 }, callOf(a.appId, playerId));
  const restrictions = (appId: string, playerId: string) => tier.bus.request(GetPurchaseRestrictions, {}, callOf(appId, playerId));

  /** The balances, inventory, purchases and debits of a player: what a refused purchase must not change. */
  async function stateOf(playerId: string) {
    const inv = await tier.bus.request(
      GetInventory,
      { ownerId: playerId, page: { limit: 100, offset: 0 }, order: 'asc' },
      callOf(app.appId, playerId),
    );
    return {
      coins: run.wallet.balance(playerId, 'coins'),
      gems: run.wallet.balance(playerId, 'gems'),
      chests: inv.totalChests,
      purchases: (
        await chestsSql<{ n: number }>(tier, "SELECT count(*)::int AS n FROM payments WHERE kind = 'purchase' AND player_id = $1", [playerId])
      )[0]!.n,
      debits: [...run.wallet.debits.values()].filter((d) => d.playerId === playerId).length,
    };
  }

  const cells = Object.entries(REGIONS).flatMap(([region, r]) => Object.entries(AGES).map(([age, a]) => ({ region, r, age, a })));

  it(
    'region × age × currency: paid gems refused by region, then age (unknown refused); coins allowed everywhere; nothing debited when refused',
    { timeout: 120_000 },
    async () => {
      expect(cells).toHaveLength(20);
      const outcomes: string[] = [];
      const runCell = async ({ region, r, age, a }: (typeof cells)[number]) => {
        const playerId = newPlayer({ ...(r.country ? { country: r.country } : {}), ...(a.birth_year ? { birth_year: a.birth_year } : {}) });
        const expected = expectedForGems(r, a);
        const allowed = expected === 'allowed';

        // The restrictions the catalog shows the player beforehand, per currency.
        const { refused } = await restrictions(app.appId, playerId);
        expect(refused.gems, `${region}/${age}`).toBe(allowed ? undefined : expected.code);
        expect(refused.coins, `${region}/${age}`).toBeUndefined();

        const before = await stateOf(playerId);
        if (allowed) {
          expect((await buy(app, playerId, 'silver-chest', 'gems')).balance).toBe('0.00');
        } else {
          await expect(buy(app, playerId, 'silver-chest', 'gems'), `${region}/${age}`).rejects.toMatchObject({
            kind: 'forbidden',
            errors: [{ code: expected.code, meta: { reason: expected.reason } }],
          });
          expect(await stateOf(playerId), `${region}/${age}: nothing changed`).toEqual(before);
        }
        expect((await buy(app, playerId, 'wooden-chest', 'coins')).chests).toHaveLength(1);
        outcomes.push(`${region}/${age}: gems ${allowed ? 201 : 403}, coins 201`);
      };
      // A few players at a time, as the gateway would see them.
      for (let i = 0; i < cells.length; i += 4) await Promise.all(cells.slice(i, i + 4).map(runCell));
      expect(outcomes.filter((o) => o.includes('gems 201')).sort()).toEqual([
        'DE/adult: gems 201, coins 201',
        'DE/turned 18 last year: gems 201, coins 201',
      ]);
    },
  );

  it('an app whose content has no compliance rules sells gems to players who declared nothing', async () => {
    const { compliance: _none, ...content } = readContentFile();
    const other = await chestsApp(tier, { content });
    const playerId = newPlayer({});
    expect((await restrictions(other.appId, playerId)).refused).toEqual({});
    expect((await buy(other, playerId, 'silver-chest', 'gems')).balance).toBe('0.00');
  });
});
