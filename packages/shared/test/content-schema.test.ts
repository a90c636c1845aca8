import { describe, expect, it } from 'vitest';
import { AppContentSchema, readContentFile } from '../src/index.js';

// Small tier: the content schema's checks of the fair-chest rules, no infrastructure.
const demo = readContentFile();
type Raw = Record<string, any>;

/** The demo content with one change, as a raw document. */
function variant(change: (c: Raw) => void): Raw {
  const c = JSON.parse(JSON.stringify(demo)) as Raw;
  change(c);
  return c;
}

/** The messages of a refused document, as `path: message`. */
function refusals(c: Raw): string[] {
  const r = AppContentSchema.safeParse(c);
  return r.success ? [] : r.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
}

const silverAt = demo.chests.findIndex((c) => c.id === 'silver-chest');
const setPity = (pity: unknown) => (c: Raw) => void (c.chests[silverAt].rules.pity = pity);

describe('content schema: fair chests', () => {
  it('accepts the demo content, which shows pity, duplicates and compliance', () => {
    expect(refusals(demo as Raw)).toEqual([]);
    expect(demo.chests.some((c) => c.rules.pity?.soft_start !== undefined)).toBe(true);
    expect(demo.duplicates?.max_copies).toBe(3);
    expect(demo.compliance?.blocked_regions).toEqual(['BE', 'NL']);
  });

  it('refuses a pity rarity that does not exist, or that the pool cannot give', () => {
    expect(refusals(variant(setPity({ rarity: 'mythic', hard: 10 })))).toEqual([`chests.${silverAt}.rules.pity.rarity: unknown rarity mythic`]);
    const commonsOnly = variant((c) => {
      c.chests[silverAt].rules = { items: { fixed: 1 }, pools: [{ collectibles: ['ancient-clay-amulet'] }], pity: { rarity: 'rare', hard: 5 } };
    });
    expect(refusals(commonsOnly)).toEqual([`chests.${silverAt}.rules.pity.rarity: the pool has no collectible of rarity rare or better`]);
  });

  it('refuses soft pity without its step, or starting at or past hard', () => {
    expect(refusals(variant(setPity({ rarity: 'legendary', hard: 10, soft_start: 5 })))).toEqual([
      `chests.${silverAt}.rules.pity: soft_start and soft_step go together`,
    ]);
    expect(refusals(variant(setPity({ rarity: 'legendary', hard: 10, soft_start: 10, soft_step: 0.1 })))).toEqual([
      `chests.${silverAt}.rules.pity.soft_start: soft_start must be below hard`,
    ]);
    expect(refusals(variant(setPity({ rarity: 'legendary', hard: 0 })))).toHaveLength(1);
  });

  it('refuses duplicate conversion into an unknown currency or for an unknown rarity', () => {
    const bad = variant((c) => {
      c.duplicates = { max_copies: 2, convert: { currency: 'shards', by_rarity: { mythic: 5 } } };
    });
    expect(refusals(bad).sort()).toEqual([
      'duplicates.convert.by_rarity.mythic: unknown rarity mythic',
      'duplicates.convert.currency: unknown currency shards',
    ]);
    expect(refusals(variant((c) => void (c.duplicates.max_copies = 0)))).toHaveLength(1);
  });

  it('refuses compliance naming an unknown currency', () => {
    expect(refusals(variant((c) => void (c.compliance.paid_currencies = ['gems', 'rubies'])))).toEqual([
      'compliance.paid_currencies.1: unknown currency rubies',
    ]);
  });
});

describe('content schema: collection rewards', () => {
  const rewardedAt = demo.collections.findIndex((c) => c.completion_reward);
  const setReward = (reward: unknown) => variant((c) => void (c.collections[rewardedAt].completion_reward = reward));
  const at = `collections.${rewardedAt}.completion_reward`;

  it('accepts the demo reward: currencies and chests of the content', () => {
    expect(rewardedAt).toBeGreaterThanOrEqual(0);
    expect(refusals(setReward({ currencies: { gems: 5 } }))).toEqual([]);
    expect(refusals(setReward({ chests: [demo.chests[0]!.id, demo.chests[0]!.id] }))).toEqual([]);
  });

  it('refuses unknown currencies and chest types, with their pointers', () => {
    expect(refusals(setReward({ currencies: { rubies: 5 }, chests: ['no-such-chest'] })).sort()).toEqual([
      `${at}.chests.0: unknown chest no-such-chest`,
      `${at}.currencies.rubies: unknown currency rubies`,
    ]);
  });

  it('refuses amounts that are not positive integers, or past the currency max_credit', () => {
    for (const amount of [0, -5, 2.5, '5']) expect(refusals(setReward({ currencies: { gems: amount } })), String(amount)).toHaveLength(1);
    const gems = demo.currencies.find((c) => c.code === 'gems')!;
    expect(refusals(setReward({ currencies: { gems: Number(gems.max_credit) + 1 } }))).toEqual([
      `${at}.currencies.gems: ${Number(gems.max_credit) + 1} exceeds the max_credit ${gems.max_credit} of gems`,
    ]);
  });

  it('refuses an empty reward and unknown members', () => {
    for (const bad of [{}, { chests: [] }, { currencies: {} }, { currencies: { gems: 5 }, items: ['x'] }]) {
      expect(refusals(setReward(bad)), JSON.stringify(bad)).not.toEqual([]);
    }
  });
});

describe('content schema: trading', () => {
  const trading = {
    enabled: true,
    rarities: { common: { tradable: true, token_cost: 0 }, rare: { tradable: true, token_cost: 5 }, legendary: { tradable: false } },
    token_currency: 'coins',
    dissolve: { common: 1, rare: 5 },
    stamina: { max: 3, regen_hours: 8, refill: { currency: 'gems', amount: 10 } },
  };
  const withTrading = (t: unknown) => variant((c) => void (c.trading = t));

  it('accepts trading rules and fills the defaults a studio expects', () => {
    const parsed = AppContentSchema.parse(withTrading(trading));
    expect(parsed.trading).toMatchObject({
      friends_only: true,
      same_rarity: true,
      dissolve_keeps: 1,
      offer_ttl_hours: 72,
      min_account_age_hours: 0,
      daily_offer_cap: 20,
    });
    expect(parsed.trading!.rarities.legendary).toEqual({ tradable: false, token_cost: 0 });
    expect(AppContentSchema.parse(demo).trading).toBeUndefined();
  });

  it('refuses unknown rarities and currencies, each with its pointer', () => {
    const bad = {
      ...trading,
      rarities: { ...trading.rarities, mythic: { tradable: true, token_cost: 1 } },
      dissolve: { epic: 2 },
      token_currency: 'tokens',
      stamina: { max: 3, regen_hours: 8, refill: { currency: 'rubies', amount: 1 } },
    };
    expect(refusals(withTrading(bad)).sort()).toEqual([
      'trading.dissolve.epic: unknown rarity epic',
      'trading.rarities.mythic: unknown rarity mythic',
      'trading.stamina.refill.currency: unknown currency rubies',
      'trading.token_currency: unknown currency tokens',
    ]);
  });

  it('refuses token costs or dissolving without a token currency', () => {
    const { token_currency: _, ...noCurrency } = trading;
    expect(refusals(withTrading(noCurrency))).toEqual([
      'trading.token_currency: token costs and dissolving need a token_currency to keep the tokens in',
    ]);
    expect(refusals(withTrading({ enabled: true, rarities: { common: { tradable: true } } }))).toEqual([]);
  });

  it('refuses bad numbers and unknown fields', () => {
    for (const bad of [
      { ...trading, offer_ttl_hours: 0 },
      { ...trading, dissolve_keeps: -1 },
      { ...trading, dissolve: { common: 0 } },
      { ...trading, stamina: { max: 0, regen_hours: 1 } },
      { ...trading, stamina: { max: 1, regen_hours: 0 } },
      { ...trading, rarities: { common: { tradable: true, token_cost: 1.5 } } },
      { ...trading, daily_offer_cap: 0 },
      { ...trading, trade_everything: true },
      { rarities: {} },
    ]) {
      expect(refusals(withTrading(bad)), JSON.stringify(bad)).not.toEqual([]);
    }
  });
});
