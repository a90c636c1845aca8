import type { BannerContent, DisclosedBannerRules } from '@ccs/shared';
import { chestTypeId } from '@ccs/shared';

/** The pity group of a banner's content: its `pity_group`, else its slug. */
export const bannerGroupOf = (b: Pick<BannerContent, 'slug' | 'pity_group'>): string => b.pity_group ?? b.slug;

/**
 * A banner's rules as its odds document discloses them (`attributes.banner_rules`): everything in
 * the banner that changes what a pull rolls, namely the chest type pulled (its table), the pity
 * group (whose guarantee flag and pity counter the pull starts from), the featured roll, the
 * guarantee and the ten-pull floor. Its name, window and spark change no roll and are not here.
 * The odds log hashes their canonical JSON; the notice period holds a change of them.
 */
export const disclosedBannerRules = (appId: string, b: BannerContent): DisclosedBannerRules => ({
  chest_type_id: chestTypeId(appId, b.chest),
  pity_group: bannerGroupOf(b),
  featured: { rarity: b.featured.rarity, collectibles: [...b.featured.collectibles], share: b.featured.share },
  guarantee: b.guarantee,
  ten_pull_floor: b.ten_pull_floor ?? null,
});

/**
 * `current` (the banner as the current content names, dates and sparks it) with the rules of
 * `inForce` (the banner at the version whose rules are in force): what reads and pulls use.
 */
export function withRulesOf(current: BannerContent, inForce: BannerContent): BannerContent {
  const { pity_group: _group, ten_pull_floor: _floor, ...rest } = current;
  return {
    ...rest,
    chest: inForce.chest,
    featured: inForce.featured,
    guarantee: inForce.guarantee,
    ...(inForce.pity_group !== undefined ? { pity_group: inForce.pity_group } : {}),
    ...(inForce.ten_pull_floor !== undefined ? { ten_pull_floor: inForce.ten_pull_floor } : {}),
  };
}
