import type { BannerContent } from '@ccs/shared';
import { catalogVersion } from '../cache/content-version.js';
import { chestTypeId } from '../chest-type-id.js';
import type { ChestsDeps } from '../deps.js';
import type { ContentSnapshot } from '../repositories/content-repo.js';

/** A banner of an app's current content, with what the service derives from it. */
export interface Banner {
  content: BannerContent;
  /** The API id: the banner's slug. */
  id: string;
  /** The pity group whose guarantee flag and pity counter its pulls carry: `pity_group`, else the slug. */
  group: string;
  /** The catalog id of the chest type it pulls. */
  chestTypeId: string;
  startsAt: Date;
  endsAt: Date;
}

/** Whether a banner takes pulls at `now`: from `starts_at` up to, not including, `ends_at`. */
export const isActive = (b: Pick<Banner, 'startsAt' | 'endsAt'>, now: Date): boolean => b.startsAt <= now && now < b.endsAt;

/** The pity group of a banner's content: its `pity_group`, else its slug. */
export const bannerGroupOf = (b: Pick<BannerContent, 'slug' | 'pity_group'>): string => b.pity_group ?? b.slug;

export const bannerOf = (appId: string, content: BannerContent): Banner => ({
  content,
  id: content.slug,
  group: bannerGroupOf(content),
  chestTypeId: chestTypeId(appId, content.chest),
  startsAt: new Date(content.starts_at),
  endsAt: new Date(content.ends_at),
});

/** The app's current content (undefined before it arrived). */
export async function currentContent(deps: Pick<ChestsDeps, 'cache' | 'pool' | 'drops'>, appId: string): Promise<ContentSnapshot | undefined> {
  const version = await catalogVersion(deps, appId);
  return version === undefined ? undefined : deps.drops.content(appId, version);
}

/** The banners of the app's current content, in content order. */
export async function currentBanners(deps: Pick<ChestsDeps, 'cache' | 'pool' | 'drops'>, appId: string): Promise<Banner[]> {
  const content = await currentContent(deps, appId);
  return (content?.banners ?? []).map((b) => bannerOf(appId, b));
}

/**
 * The banner a banner opening rolls (or rolled) with: the one of that slug in the content version
 * its chest type's rules came from, else the app's current one. The pull, the server's
 * verification and the auditor's export all look it up this way.
 */
export async function bannerAsRolled(
  deps: Pick<ChestsDeps, 'cache' | 'pool' | 'drops'>,
  appId: string,
  slug: string,
  rulesContent: Pick<ContentSnapshot, 'banners'>,
): Promise<BannerContent | undefined> {
  return rulesContent.banners.find((b) => b.slug === slug) ?? (await findBanner(deps, appId, slug))?.content;
}

/** One banner of the app's current content by id (slug), or undefined. */
export async function findBanner(deps: Pick<ChestsDeps, 'cache' | 'pool' | 'drops'>, appId: string, id: string): Promise<Banner | undefined> {
  return (await currentBanners(deps, appId)).find((b) => b.id === id);
}
