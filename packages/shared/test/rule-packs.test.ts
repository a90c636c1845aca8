import { readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { AppContentSchema, ComplianceSchema, RULE_PACK_NAMES } from '../src/contracts/content.js';
import { readContentFile } from '../src/contracts/default-content.js';
import { complianceInForce, rulePacks } from '../src/domain/rule-packs.js';

// The shipped rule packs (packages/shared/compliance/packs) and how content applies them.

const rules = (r: Record<string, unknown>) => ComplianceSchema.parse(r);

describe('rule packs', () => {
  it('ships one valid pack file per name, each rule with its source and the date it was checked', () => {
    const files = readdirSync(new URL('../compliance/packs/', import.meta.url)).sort();
    expect(files).toEqual([...RULE_PACK_NAMES].map((n) => `${n}.json`).sort());
    const packs = rulePacks();
    for (const name of RULE_PACK_NAMES) {
      const pack = packs.get(name)!;
      expect(pack.pack).toBe(name);
      expect(pack.checked_at).toMatch(/^\d{4}-\d{2}-\d{2}$/);
      for (const r of pack.rules) expect(r.source.title.length * r.source.issuer.length).toBeGreaterThan(0);
    }
  });

  it('applies nothing without packs: the settings in force are the explicit ones', () => {
    const inForce = complianceInForce(rules({ paid_currencies: ['gems'], blocked_regions: ['BE'], min_age: 16 }));
    expect(inForce).toMatchObject({ blocked_regions: ['BE'], min_age: 16, spend_limits: [], regional_age_gates: [], forbid_complete_gacha: false });
    expect(inForce.from).toEqual({ blocked_regions: {} });
    // Computed once per rules object (content is cached): the gates pay nothing per request.
    const same = rules({});
    expect(complianceInForce(same)).toBe(complianceInForce(same));
  });

  it('adds each pack on top of the explicit settings, only tightening, and names the rule behind each addition', () => {
    const inForce = complianceInForce(
      rules({
        paid_currencies: ['gems'],
        blocked_regions: ['BE'],
        odds_change_notice_hours: 48,
        spend_limits: [{ max_age: 17, per_day: 30 }],
        rule_packs: ['BE', 'NL', 'BR', 'CN', 'KR', 'JP'],
      }),
    );
    // BE was also blocked explicitly: once in the list, and its pack still names the law behind it.
    expect([...inForce.blocked_regions].sort()).toEqual(['BE', 'NL']);
    expect(inForce.from.blocked_regions).toEqual({
      BE: expect.objectContaining({ pack: 'BE', rule: 'paid_random_items_are_gambling' }),
      NL: expect.objectContaining({ pack: 'NL', rule: 'paid_random_items_with_tradable_prizes_are_gambling' }),
    });
    expect(inForce.regional_age_gates.map((g) => [g.countries, g.min_age, g.rule.pack])).toEqual([
      [['BR'], 18, 'BR'],
      [['CN'], 8, 'CN'],
    ]);
    // CN's limits are in money (CNY paid at the stores): no payment under 8, then its caps for minors.
    expect(inForce.spend_limits).toEqual([
      { max_age: 17, per_day: 30 },
      {
        countries: ['CN'],
        max_age: 7,
        per_payment: 0,
        money: 'CNY',
        rule: expect.objectContaining({ pack: 'CN', rule: 'no_store_payments_under_8' }),
      },
      {
        countries: ['CN'],
        max_age: 15,
        per_payment: 50,
        per_month: 200,
        money: 'CNY',
        rule: expect.objectContaining({ pack: 'CN', rule: 'minor_spend_limits_8_to_15' }),
      },
      {
        countries: ['CN'],
        max_age: 17,
        per_payment: 100,
        per_month: 400,
        money: 'CNY',
        rule: expect.objectContaining({ pack: 'CN', rule: 'minor_spend_limits_16_to_17' }),
      },
    ]);
    // KR's 24 h is less than the explicit 48 h: the longer notice holds, and it is the content's own.
    expect(inForce.odds_change_notice_hours).toBe(48);
    expect(inForce.from.odds_change_notice_hours).toBeUndefined();
    expect(inForce.forbid_complete_gacha).toBe(true);
    expect(inForce.from.forbid_complete_gacha).toMatchObject({
      pack: 'JP',
      rule: 'no_complete_gacha',
      source: expect.stringContaining('Consumer Affairs Agency'),
    });
    expect(inForce.keep_draw_records_days).toBe(90);
  });

  it("takes KR's notice when the content sets a shorter one, and refuses an unknown pack name", () => {
    const inForce = complianceInForce(rules({ odds_change_notice_hours: 2, rule_packs: ['KR'] }));
    expect(inForce.odds_change_notice_hours).toBe(24);
    expect(inForce.from.odds_change_notice_hours).toMatchObject({ pack: 'KR', rule: 'odds_change_notice_24h' });
    expect(ComplianceSchema.safeParse({ rule_packs: ['XX'] }).success).toBe(false);
  });

  it('refuses a complete gacha under the JP pack alone, naming the pack rule', () => {
    // The forest's set (it has a completion reward) only from the gems-only golden chest.
    const content = structuredClone(readContentFile());
    content.compliance = { ...content.compliance!, forbid_complete_gacha: false, rule_packs: ['JP'] };
    for (const ch of content.chests)
      if (ch.id !== 'golden-chest') ch.rules.pools = ch.rules.pools.filter((p) => !('collection' in p) || p.collection !== 'enchanted-forest');
    const parsed = AppContentSchema.safeParse(content);
    expect(parsed.success).toBe(false);
    const issue = parsed.error!.issues.find((i) => (i as { params?: { code?: string } }).params?.code === 'complete_gacha') as {
      params?: { meta?: unknown };
    };
    expect(issue.params?.meta).toMatchObject({
      collection: 'enchanted-forest',
      rule: { pack: 'JP', rule: 'no_complete_gacha', source: expect.stringContaining('2012-05-18') },
    });
    content.compliance = { ...content.compliance, rule_packs: [] };
    expect(AppContentSchema.safeParse(content).success).toBe(true);
  });
});
