import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { CountryCodeSchema, MoneyCodeSchema, RULE_PACK_NAMES, RulePackName, type ComplianceRules, type SpendLimit } from '../contracts/content.js';

/**
 * Rule packs (docs/design.md §7): the rules of a jurisdiction as a versioned data file with its legal
 * source and the date it was checked, one per pack under packages/shared/compliance/packs/.
 * Content applies them with `compliance.rule_packs: ["BE", …]`, on top of its explicit settings
 * (the stricter holds). A refusal a pack causes names it: `meta.rule = {pack, rule, source}`.
 */

const DATE = /^\d{4}-\d{2}-\d{2}$/;

/** What one rule of a pack does. */
const effectSchema = () =>
  z.union([
    /** Paid random items refused in these countries (below `below_age` only, when given). */
    z
      .object({ block: z.object({ countries: z.array(CountryCodeSchema).min(1), below_age: z.number().int().min(1).max(99).optional() }).strict() })
      .strict(),
    /**
     * A spend limit, as content's compliance.spend_limits: in units of paid currency, or in `money`
     * paid in verified store transactions. 0 allows no payment at all (a pack's "no payments").
     */
    z
      .object({
        spend_limit: z
          .object({
            countries: z.array(CountryCodeSchema).min(1).optional(),
            max_age: z.number().int().min(0).max(99),
            per_payment: z.number().int().min(0).optional(),
            per_day: z.number().int().min(0).optional(),
            per_month: z.number().int().min(0).optional(),
            money: MoneyCodeSchema.optional(),
          })
          .strict()
          .refine((l) => l.per_day !== undefined || l.per_month !== undefined || l.per_payment !== undefined, {
            message: 'a spend limit needs per_day, per_month or per_payment',
          }),
      })
      .strict(),
    /** The least notice before new odds take effect. */
    z
      .object({
        odds_change_notice_hours: z
          .number()
          .int()
          .min(1)
          .max(90 * 24),
      })
      .strict(),
    /** Content that would make a complete gacha is refused at load. */
    z.object({ forbid_complete_gacha: z.literal(true) }).strict(),
    /** Openings (draw records) are kept at least this long. */
    z.object({ keep_draw_records_days: z.number().int().min(1).max(36_500) }).strict(),
  ]);

/**
 * A pack file's schema. Made on first use: content's schema checks packs (complete gacha), so this
 * module is loaded while contracts/content.ts is still loading, before its schemas exist.
 */
const packSchema = () =>
  z
    .object({
      pack: RulePackName,
      version: z.number().int().min(1),
      jurisdiction: z.string().min(1),
      checked_at: z.string().regex(DATE),
      /** False: written from public reporting, not yet checked against the law's own text. */
      checked_against_primary_text: z.boolean(),
      units: z.string().optional(),
      rules: z
        .array(
          z
            .object({
              rule: z.string().regex(/^[a-z0-9_]+$/),
              summary: z.string().min(1),
              effect: effectSchema(),
              source: z
                .object({ title: z.string().min(1), issuer: z.string().min(1), date: z.string().regex(DATE), law: z.string().optional() })
                .strict(),
            })
            .strict(),
        )
        .min(1),
    })
    .strict();
let schema: ReturnType<typeof packSchema> | undefined;
/** The schema of a pack file (packages/shared/compliance/packs/*.json). */
export const rulePackSchema = () => (schema ??= packSchema());
export type RulePack = z.infer<ReturnType<typeof packSchema>>;

/** Which rule of which pack a setting comes from: what a refusal names (`meta.rule`). */
export interface RuleRef {
  pack: string;
  rule: string;
  /** The source, as one line: issuer, title, date. */
  source: string;
}

const PACKS_DIR = new URL('../../compliance/packs/', import.meta.url);
let loaded: ReadonlyMap<string, RulePack> | undefined;

/** Every shipped pack, read and checked once (a malformed pack file is a build error: it throws). */
export function rulePacks(): ReadonlyMap<string, RulePack> {
  if (!loaded) {
    const packs = new Map<string, RulePack>();
    for (const name of RULE_PACK_NAMES) {
      const file = new URL(`${name}.json`, PACKS_DIR);
      const pack = rulePackSchema().parse(JSON.parse(readFileSync(file, 'utf8')));
      if (pack.pack !== name) throw new Error(`rule pack ${file.pathname} says it is "${pack.pack}"`);
      packs.set(name, pack);
    }
    loaded = packs;
  }
  return loaded;
}

/** A spend limit in force: content's, or a pack's (then `rule` names it). */
export type SpendLimitInForce = SpendLimit & { rule?: RuleRef };

/** A country-scoped age gate (a pack's `block` with `below_age`). */
export interface RegionalAgeGate {
  countries: string[];
  min_age: number;
  rule: RuleRef;
}

/** Content's compliance settings with its rule packs applied: what every check reads. */
export interface ComplianceInForce extends Omit<ComplianceRules, 'spend_limits'> {
  spend_limits: SpendLimitInForce[];
  /** Age gates per country (BR under 18, CN under 8). */
  regional_age_gates: RegionalAgeGate[];
  /** Days openings must be kept (the strictest pack's), if a pack sets it. */
  keep_draw_records_days?: number;
  /** Which pack rule a setting comes from, where a pack sets it (also when the content sets the same explicitly: the pack names the law). */
  from: {
    blocked_regions: Record<string, RuleRef>;
    forbid_complete_gacha?: RuleRef;
    odds_change_notice_hours?: RuleRef;
    keep_draw_records_days?: RuleRef;
  };
}

const refOf = (pack: RulePack, rule: RulePack['rules'][number]): RuleRef => ({
  pack: pack.pack,
  rule: rule.rule,
  source: `${rule.source.issuer}: ${rule.source.title} (${rule.source.date})`,
});

const inForceOf = new WeakMap<ComplianceRules, ComplianceInForce>();

/**
 * The settings in force: `rules` with every pack of `rules.rule_packs` applied on top. A pack
 * only adds or tightens: a blocked country, an age gate, a spend limit, a longer notice, the
 * complete-gacha check, a longer record keeping. Remembered per rules object (content is cached,
 * so the gates compute it once per content version).
 */
export function complianceInForce(rules: ComplianceRules): ComplianceInForce {
  let known = inForceOf.get(rules);
  if (!known) inForceOf.set(rules, (known = applyPacks(rules)));
  return known;
}

function applyPacks(rules: ComplianceRules): ComplianceInForce {
  const out: ComplianceInForce = {
    ...rules,
    blocked_regions: [...rules.blocked_regions],
    spend_limits: [...(rules.spend_limits ?? [])],
    regional_age_gates: [],
    from: { blocked_regions: {} },
  };
  const packs = rulePacks();
  for (const name of rules.rule_packs ?? []) {
    const pack = packs.get(name)!;
    for (const rule of pack.rules) {
      const ref = refOf(pack, rule);
      const e = rule.effect;
      if ('block' in e && e.block.below_age === undefined) {
        for (const c of e.block.countries) {
          if (!out.blocked_regions.includes(c)) out.blocked_regions.push(c);
          out.from.blocked_regions[c] ??= ref;
        }
      } else if ('block' in e) {
        out.regional_age_gates.push({ countries: e.block.countries, min_age: e.block.below_age!, rule: ref });
      } else if ('spend_limit' in e) {
        out.spend_limits.push({ ...e.spend_limit, rule: ref });
      } else if ('odds_change_notice_hours' in e) {
        if ((out.odds_change_notice_hours ?? 0) <= e.odds_change_notice_hours) {
          out.odds_change_notice_hours = e.odds_change_notice_hours;
          out.from.odds_change_notice_hours = ref;
        }
      } else if ('forbid_complete_gacha' in e) {
        out.forbid_complete_gacha = true;
        out.from.forbid_complete_gacha ??= ref;
      } else if ((out.keep_draw_records_days ?? 0) < e.keep_draw_records_days) {
        out.keep_draw_records_days = e.keep_draw_records_days;
        out.from.keep_draw_records_days = ref;
      }
    }
  }
  return out;
}
