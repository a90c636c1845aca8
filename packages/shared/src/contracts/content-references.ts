import type { z } from 'zod';
import type { BannerContent, ChestTypeContent, CollectionContent, ComplianceRules, DuplicatesRules, TradingRules } from './content.js';
import { COMPLETE_GACHA_ADVICE, completeGachas } from '../domain/complete-gacha.js';
import { complianceInForce } from '../domain/rule-packs.js';
import { checkStore, type StoreContent } from './store-content.js';

/** The parts of a content file whose cross-references AppContentSchema checks. */
interface ReferencedContent {
  rarities: { id: string; rank: number }[];
  collections: CollectionContent[];
  chests: ChestTypeContent[];
  currencies: { code: string; max_credit?: string }[];
  players: { starter_chest_type: string };
  duplicates?: DuplicatesRules;
  compliance?: ComplianceRules;
  banners?: BannerContent[];
  store?: StoreContent;
  trading?: TradingRules;
}

/** A problem at `path`; `params` give it its own error code and meta (else `invalid_field`). */
type Issue = (path: (string | number)[], message: string, params?: { code: string; meta: Record<string, unknown> }) => void;

/** The ids a content file declares, for checking what points at them. */
interface Known {
  rarities: Set<string>;
  currencies: Set<string>;
  collections: Set<string>;
  collectibles: Set<string>;
}

/** Whether a chest's pool holds a collectible ranked at or above `rarity`. */
function poolReaches(
  c: { rarities: { id: string; rank: number }[]; collections: CollectionContent[] },
  ch: ChestTypeContent,
  rarity: string,
): boolean {
  const rank = new Map(c.rarities.map((r) => [r.id, r.rank]));
  const min = rank.get(rarity) ?? Number.POSITIVE_INFINITY;
  const listed = new Set(ch.rules.pools.flatMap((p) => ('collectibles' in p ? p.collectibles : [])));
  const whole = new Set(ch.rules.pools.flatMap((p) => ('collection' in p ? [p.collection] : [])));
  return c.collections.some((col) => col.collectibles.some((it) => (whole.has(col.id) || listed.has(it.id)) && (rank.get(it.rarity) ?? 0) >= min));
}

/** Collections and collectibles: unique ids, known rarities, payable completion rewards. Fills `known`. */
function checkCollections(c: ReferencedContent, known: Known, issue: Issue): void {
  const { collections, collectibles, rarities } = known;
  c.collections.forEach((col, i) => {
    if (collections.has(col.id)) issue(['collections', i, 'id'], `duplicate collection ${col.id}`);
    collections.add(col.id);
    col.collectibles.forEach((it, j) => {
      if (collectibles.has(it.id)) issue(['collections', i, 'collectibles', j, 'id'], `duplicate collectible ${it.id}`);
      collectibles.add(it.id);
      if (!rarities.has(it.rarity)) issue(['collections', i, 'collectibles', j, 'rarity'], `unknown rarity ${it.rarity}`);
    });
    for (const [code, amount] of Object.entries(col.completion_reward?.currencies ?? {})) {
      const currency = c.currencies.find((x) => x.code === code);
      if (!currency) issue(['collections', i, 'completion_reward', 'currencies', code], `unknown currency ${code}`);
      // The wallet refuses a credit past the currency's max_credit: the reward could never be paid.
      else if (currency.max_credit !== undefined && Number(amount) > Number(currency.max_credit))
        issue(['collections', i, 'completion_reward', 'currencies', code], `${amount} exceeds the max_credit ${currency.max_credit} of ${code}`);
    }
  });
  const chestSlugs = new Set(c.chests.map((ch) => ch.id));
  c.collections.forEach((col, i) =>
    (col.completion_reward?.chests ?? []).forEach((slug, j) => {
      if (!chestSlugs.has(slug)) issue(['collections', i, 'completion_reward', 'chests', j], `unknown chest ${slug}`);
    }),
  );
}

/** The currencies a chest is priced, keyed and skipped in. */
function checkChestCurrencies(ch: ChestTypeContent, i: number, { currencies }: Known, issue: Issue): void {
  for (const code of Object.keys(ch.price)) if (!currencies.has(code)) issue(['chests', i, 'price', code], `unknown currency ${code}`);
  if (ch.requires_key && !currencies.has(ch.requires_key.currency))
    issue(['chests', i, 'requires_key', 'currency'], `unknown currency ${ch.requires_key.currency}`);
  const skip = ch.unlock?.skip;
  if (skip && !currencies.has(skip.currency)) issue(['chests', i, 'unlock', 'skip', 'currency'], `unknown currency ${skip.currency}`);
}

/** A chest's drop rules: item range, pools, rarities named, and a pity its pool can honour. */
function checkChestRules(c: ReferencedContent, ch: ChestTypeContent, i: number, known: Known, issue: Issue): void {
  const { rarities, collections, collectibles } = known;
  const items = ch.rules.items;
  if ('min' in items && items.min > items.max) issue(['chests', i, 'rules', 'items'], 'min is above max');
  ch.rules.pools.forEach((p, j) => {
    if ('collection' in p && !collections.has(p.collection)) issue(['chests', i, 'rules', 'pools', j], `unknown collection ${p.collection}`);
    if ('collectibles' in p)
      for (const id of p.collectibles) if (!collectibles.has(id)) issue(['chests', i, 'rules', 'pools', j], `unknown collectible ${id}`);
  });
  for (const r of Object.keys(ch.rules.rarity_weights ?? {}))
    if (!rarities.has(r)) issue(['chests', i, 'rules', 'rarity_weights', r], `unknown rarity ${r}`);
  for (const g of [...ch.rules.guarantees, ...ch.rules.bonus])
    if (!rarities.has(g.min_rarity)) issue(['chests', i, 'rules'], `unknown rarity ${g.min_rarity}`);
  if (ch.rules.pity && !rarities.has(ch.rules.pity.rarity)) issue(['chests', i, 'rules', 'pity', 'rarity'], `unknown rarity ${ch.rules.pity.rarity}`);
  else if (ch.rules.pity && !poolReaches(c, ch, ch.rules.pity.rarity)) {
    // The guarantee could never be honoured and the counter never reset.
    issue(['chests', i, 'rules', 'pity', 'rarity'], `the pool has no collectible of rarity ${ch.rules.pity.rarity} or better`);
  }
}

/** Chest types: unique ids, then each one's currencies and rules. Returns the chest ids. */
function checkChests(c: ReferencedContent, known: Known, issue: Issue): Set<string> {
  const chestIds = new Set<string>();
  c.chests.forEach((ch, i) => {
    if (chestIds.has(ch.id)) issue(['chests', i, 'id'], `duplicate chest ${ch.id}`);
    chestIds.add(ch.id);
    checkChestCurrencies(ch, i, known, issue);
    checkChestRules(c, ch, i, known, issue);
  });
  return chestIds;
}

/** Duplicate conversion, paid currencies and the starter chest. */
function checkRules(c: ReferencedContent, { currencies, rarities }: Known, chestIds: Set<string>, issue: Issue): void {
  if (c.duplicates) {
    const { currency, by_rarity } = c.duplicates.convert;
    if (!currencies.has(currency)) issue(['duplicates', 'convert', 'currency'], `unknown currency ${currency}`);
    for (const r of Object.keys(by_rarity)) if (!rarities.has(r)) issue(['duplicates', 'convert', 'by_rarity', r], `unknown rarity ${r}`);
  }
  c.compliance?.paid_currencies.forEach((code, i) => {
    if (!currencies.has(code)) issue(['compliance', 'paid_currencies', i], `unknown currency ${code}`);
  });
  if (c.chests.length && !chestIds.has(c.players.starter_chest_type)) {
    issue(['players', 'starter_chest_type'], `unknown chest type ${c.players.starter_chest_type}`);
  }
}

/**
 * No complete gacha (`compliance.forbid_complete_gacha`, or the JP rule pack): a collection with a
 * completion reward may not hold a collectible that only chests costing a paid currency can drop
 * (domain/complete-gacha.ts). One issue per such collection, coded `complete_gacha`, naming it,
 * the collectibles and (for a pack's rule) the rule.
 */
function checkCompleteGacha(c: ReferencedContent, issue: Issue): void {
  // The content's own setting, or a rule pack's (JP): the refusal names the pack's rule then.
  const inForce = c.compliance && complianceInForce(c.compliance);
  if (!inForce?.forbid_complete_gacha) return;
  const rule = inForce.from.forbid_complete_gacha;
  for (const g of completeGachas(c, inForce.paid_currencies)) {
    issue(
      ['collections', c.collections.findIndex((col) => col.id === g.collection), 'completion_reward'],
      `complete gacha: collection ${g.collection} rewards its completion, and ${g.collectibles.join(', ')} only come from chests that cost a paid currency; ${COMPLETE_GACHA_ADVICE}`,
      { code: 'complete_gacha', meta: { collection: g.collection, collectibles: g.collectibles, ...(rule ? { rule } : {}) } },
    );
  }
}

/** The collectibles of a chest's pool (the union of its pools), by id. */
function poolOf(c: ReferencedContent, ch: ChestTypeContent): Map<string, { rarity: string }> {
  const listed = new Set(ch.rules.pools.flatMap((p) => ('collectibles' in p ? p.collectibles : [])));
  const whole = new Set(ch.rules.pools.flatMap((p) => ('collection' in p ? [p.collection] : [])));
  const pool = new Map<string, { rarity: string }>();
  for (const col of c.collections) for (const it of col.collectibles) if (whole.has(col.id) || listed.has(it.id)) pool.set(it.id, it);
  return pool;
}

/** One banner: its chest, featured rarity and collectibles (of that rarity, from the chest's pool), window, floor and spark. */
function checkBanner(c: ReferencedContent, b: BannerContent, i: number, known: Known, issue: Issue): void {
  const at = (...path: (string | number)[]) => ['banners', i, ...path];
  if (Date.parse(b.ends_at) <= Date.parse(b.starts_at)) issue(at('ends_at'), 'ends_at must be after starts_at');
  if (b.spark?.currency !== undefined && !known.currencies.has(b.spark.currency))
    issue(at('spark', 'currency'), `unknown currency ${b.spark.currency}`);
  const chest = c.chests.find((ch) => ch.id === b.chest);
  if (!chest) {
    issue(at('chest'), `unknown chest ${b.chest}`);
    return;
  }
  // A pull opens its chests at once: a chest that waits for a timer or a key cannot be pulled.
  if (chest.unlock) issue(at('chest'), `${b.chest} is time-locked (unlock): a banner pulls chests that open at once`);
  if (chest.requires_key) issue(at('chest'), `${b.chest} needs a key (requires_key): a banner pulls chests that open at once`);
  if (b.ten_pull_floor !== undefined) {
    if (!known.rarities.has(b.ten_pull_floor)) issue(at('ten_pull_floor'), `unknown rarity ${b.ten_pull_floor}`);
    else if (!poolReaches(c, chest, b.ten_pull_floor))
      issue(at('ten_pull_floor'), `the pool of ${b.chest} has no collectible of rarity ${b.ten_pull_floor} or better`);
  }
  const { rarity, collectibles, share } = b.featured;
  if (!known.rarities.has(rarity)) {
    issue(at('featured', 'rarity'), `unknown rarity ${rarity}`);
    return;
  }
  const pool = poolOf(c, chest);
  const seen = new Set<string>();
  collectibles.forEach((id, j) => {
    const rarityOf = c.collections.flatMap((col) => col.collectibles).find((it) => it.id === id)?.rarity;
    if (seen.has(id)) issue(at('featured', 'collectibles', j), `${id} is listed twice`);
    else if (!known.collectibles.has(id)) issue(at('featured', 'collectibles', j), `unknown collectible ${id}`);
    else if (rarityOf !== rarity) issue(at('featured', 'collectibles', j), `${id} is ${rarityOf}, not the featured rarity ${rarity}`);
    else if (!pool.has(id)) issue(at('featured', 'collectibles', j), `${id} does not drop from ${b.chest}`);
    seen.add(id);
  });
  // An off-banner result needs an off-banner collectible of the rarity to give.
  const offBanner = [...pool].some(([id, it]) => it.rarity === rarity && !seen.has(id));
  if (share < 1 && !offBanner)
    issue(at('featured', 'share'), `the pool of ${b.chest} has no off-banner collectible of rarity ${rarity}: share must be 1`);
}

/**
 * Banners: unique slugs, each banner's references, and no two banners of one pity group (default:
 * the banner's slug) whose windows overlap unless both say `allow_overlap` (coded
 * `banner_overlap`, naming the group and both banners): a player's guarantee and pity would
 * otherwise be spent on two banners at once without the studio meaning it.
 */
function checkBanners(c: ReferencedContent, known: Known, issue: Issue): void {
  const banners = c.banners ?? [];
  const slugs = new Set<string>();
  banners.forEach((b, i) => {
    if (slugs.has(b.slug)) issue(['banners', i, 'slug'], `duplicate banner ${b.slug}`);
    slugs.add(b.slug);
    checkBanner(c, b, i, known, issue);
  });
  banners.forEach((b, i) => {
    const group = b.pity_group ?? b.slug;
    const start = Date.parse(b.starts_at);
    const end = Date.parse(b.ends_at);
    for (let j = 0; j < i; j++) {
      const o = banners[j]!;
      if ((o.pity_group ?? o.slug) !== group || o.slug === b.slug) continue;
      if (!(start < Date.parse(o.ends_at) && Date.parse(o.starts_at) < end)) continue;
      if (b.allow_overlap && o.allow_overlap) continue;
      issue(
        ['banners', i, 'starts_at'],
        `banners ${o.slug} and ${b.slug} of pity group ${group} overlap in time: move one, or set allow_overlap on both`,
        { code: 'banner_overlap', meta: { pity_group: group, banners: [o.slug, b.slug] } },
      );
    }
  });
}

/**
 * Trading: the rarities it prices and dissolves exist, and its currencies too; tokens charged or
 * given need a `token_currency` to be kept in.
 */
function checkTrading(t: TradingRules | undefined, known: Known, issue: Issue): void {
  if (!t) return;
  const at = (...path: (string | number)[]) => ['trading', ...path];
  for (const r of Object.keys(t.rarities)) if (!known.rarities.has(r)) issue(at('rarities', r), `unknown rarity ${r}`);
  for (const r of Object.keys(t.dissolve ?? {})) if (!known.rarities.has(r)) issue(at('dissolve', r), `unknown rarity ${r}`);
  if (t.token_currency !== undefined && !known.currencies.has(t.token_currency)) issue(at('token_currency'), `unknown currency ${t.token_currency}`);
  const costs = Object.values(t.rarities).some((r) => r.token_cost > 0);
  if (t.token_currency === undefined && (costs || Object.keys(t.dissolve ?? {}).length > 0))
    issue(at('token_currency'), 'token costs and dissolving need a token_currency to keep the tokens in');
  const refill = t.stamina?.refill;
  if (refill && !known.currencies.has(refill.currency)) issue(at('stamina', 'refill', 'currency'), `unknown currency ${refill.currency}`);
}

/** Cross-references a content file must satisfy: every id it points at exists and is unique. */
export function checkReferences(c: ReferencedContent, ctx: z.RefinementCtx): void {
  const issue: Issue = (path, message, params) => ctx.addIssue({ code: 'custom', path, message, ...(params ? { params } : {}) });
  const known: Known = {
    rarities: new Set(c.rarities.map((r) => r.id)),
    currencies: new Set(c.currencies.map((x) => x.code)),
    collections: new Set<string>(),
    collectibles: new Set<string>(),
  };
  checkCollections(c, known, issue);
  const chestIds = checkChests(c, known, issue);
  checkRules(c, known, chestIds, issue);
  checkCompleteGacha(c, issue);
  checkBanners(c, known, issue);
  checkTrading(c.trading, known, issue);
  const maxCredit = new Map(c.currencies.map((x) => [x.code, x.max_credit === undefined ? Number.POSITIVE_INFINITY : Number(x.max_credit)]));
  checkStore(c.store, { currencies: known.currencies, chests: chestIds, maxCredit }, issue);
}
