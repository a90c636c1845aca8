import type { BannerContent } from '@ccs/shared';
import { catalogVersion } from '../cache/content-version.js';
import { chestTypeId } from '@ccs/shared';
import type { ChestsDeps } from '../deps.js';
import type { ContentSnapshot } from '../repositories/content-repo.js';
import { bannerRulesInForce, type BannerRulesRow } from '../repositories/banner-rules-repo.js';
import { bannerGroupOf, withRulesOf } from './banner-rules.js';

export { bannerGroupOf } from './banner-rules.js';

type Tools = Pick<ChestsDeps, 'cache' | 'pool' | 'drops'>;

/** A banner of an app's current content, with its rules in force and what the service derives from them. */
export interface Banner {
  /** The current content's banner (name, window, spark) with the rules in force (chest, pity group, featured, guarantee, floor). */
  content: BannerContent;
  /** The API id: the banner's slug. */
  id: string;
  /** The pity group whose guarantee flag and pity counter its pulls carry: `pity_group`, else the slug. */
  group: string;
  /** The catalog id of the chest type it pulls. */
  chestTypeId: string;
  startsAt: Date;
  endsAt: Date;
  /** The version of its rules in force (the content version that last changed them, as the odds log names it). */
  rulesVersion: number;
  /** A change of its rules waiting out the odds change notice period. */
  oddsChange?: { effectiveAt: string; rulesVersion: number };
}

/** Whether a banner takes pulls at `now`: from `starts_at` up to, not including, `ends_at`. */
export const isActive = (b: Pick<Banner, 'startsAt' | 'endsAt'>, now: Date): boolean => b.startsAt <= now && now < b.endsAt;

const bannerOf = (appId: string, content: BannerContent, rulesVersion: number, row?: BannerRulesRow): Banner => ({
  content,
  id: content.slug,
  group: bannerGroupOf(content),
  chestTypeId: chestTypeId(appId, content.chest),
  startsAt: new Date(content.starts_at),
  endsAt: new Date(content.ends_at),
  rulesVersion,
  ...(row?.pending ? { oddsChange: { effectiveAt: row.pending.effectiveAt.toISOString(), rulesVersion: row.pending.version } } : {}),
});

/** The app's current content (undefined before it arrived). */
export async function currentContent(deps: Tools, appId: string): Promise<ContentSnapshot | undefined> {
  const version = await catalogVersion(deps, appId);
  return version === undefined ? undefined : deps.drops.content(appId, version);
}

/** The banner of slug `slug` in content version `version` (stored versions never change), or undefined. */
export async function bannerAt(deps: Pick<ChestsDeps, 'drops'>, appId: string, slug: string, version: number): Promise<BannerContent | undefined> {
  return (await deps.drops.content(appId, version))?.banners.find((b) => b.slug === slug);
}

/**
 * The banners of the app's current content, in content order, each with its rules in force (the
 * odds change notice period: a changed banner keeps rolling its old rules until the change's
 * effective time) and the change it announces.
 */
export async function currentBanners(deps: Tools, appId: string): Promise<Banner[]> {
  const content = await currentContent(deps, appId);
  if (!content?.banners.length) return [];
  const rows = await bannerRulesInForce(deps.pool, appId);
  return Promise.all(
    content.banners.map(async (b) => {
      const row = rows.get(b.slug);
      // No row: content stored before banners had rules versions, never loaded since (its own rules, at its version).
      if (!row) return bannerOf(appId, b, content.version);
      const inForce = row.rulesVersion === content.version ? b : await bannerAt(deps, appId, b.slug, row.rulesVersion);
      return bannerOf(appId, inForce ? withRulesOf(b, inForce) : b, row.rulesVersion, row);
    }),
  );
}

/** One banner of the app's current content by id (slug), with its rules in force, or undefined. */
export async function findBanner(deps: Tools, appId: string, id: string): Promise<Banner | undefined> {
  return (await currentBanners(deps, appId)).find((b) => b.id === id);
}

/**
 * The rules in force now of banner `slug`, whether or not the current content still has it (a
 * chest a pull bought opens as that pull even after its banner left the content): the banner at
 * its rules version, and that version. Undefined for a slug never loaded since banners had rules
 * versions (bannerAsRolled answers for those).
 */
export async function bannerInForce(deps: Tools, appId: string, slug: string): Promise<{ content: BannerContent; rulesVersion: number } | undefined> {
  const row = (await bannerRulesInForce(deps.pool, appId, [slug])).get(slug);
  const content = row && (await bannerAt(deps, appId, slug, row.rulesVersion));
  return content && row ? { content, rulesVersion: row.rulesVersion } : undefined;
}

/**
 * The banner an opening without a recorded banner rules version rolled with (openings recorded
 * before banners had them): the one of that slug in the content version its chest type's rules
 * came from, else the app's current one.
 */
export async function bannerAsRolled(
  deps: Tools,
  appId: string,
  slug: string,
  rulesContent: Pick<ContentSnapshot, 'banners'>,
): Promise<BannerContent | undefined> {
  return rulesContent.banners.find((b) => b.slug === slug) ?? (await findBanner(deps, appId, slug))?.content;
}

/**
 * The banner a banner opening rolled with: at the banner rules version it recorded (what the pull
 * had in force), else as bannerAsRolled finds it. The server's verification and the auditor's
 * export both look it up so.
 */
export async function bannerAsPulled(
  deps: Tools,
  appId: string,
  pulled: { bannerId: string; rulesVersion?: number },
  rulesContent: Pick<ContentSnapshot, 'banners'>,
): Promise<BannerContent | undefined> {
  if (pulled.rulesVersion !== undefined) return bannerAt(deps, appId, pulled.bannerId, pulled.rulesVersion);
  return bannerAsRolled(deps, appId, pulled.bannerId, rulesContent);
}
