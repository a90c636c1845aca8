import { randomUUID } from 'node:crypto';
import {
  fairRandom,
  nextCounter,
  pullBanner,
  type BannerRules,
  type BannerStanding,
  type RolledItem,
  OpeningGranted,
  outboxMessage,
  rollTable,
  tableAtCounter,
  type CallContext,
  type OpeningView,
  type OutboxMessage,
} from '@ccs/shared';
import type { PityCounter } from '../repositories/openings-repo.js';
import type { ActiveSeed } from '../repositories/seeds-repo.js';
import type { ResolvedChestType } from './drop-tables.js';

/** The pity group of a chest type: its rules' group, else the type's own slug. */
export const pityGroupOf = (type: Pick<ResolvedChestType['type'], 'rules' | 'slug'>): string | undefined =>
  type.rules.pity && (type.rules.pity.group ?? type.slug);

/** A banner pity group's standing after a pull's openings, and the openings rolled in it (each adds a pull and a spark point). */
export interface BannerStandingAfter {
  group: string;
  guaranteedFeatured: boolean;
  pity: number;
  pulls: number;
}

/** Openings rolled from one state of the player's pair, and each pity group's counter after them. */
export interface Rolled {
  openings: OpeningView[];
  counters: PityCounter[];
  /** The banner groups the openings moved (empty without banner chests). */
  banners: BannerStandingAfter[];
}

/** The banner a chest opens as (DESIGN.md §8): its id, its pity group and its rules (with their logged version, when they have one). */
export interface BannerToRoll {
  id: string;
  group: string;
  rules: BannerRules;
  rulesVersion?: number;
}

/** One chest to roll: its id and its type's drop table as the opening's state resolved it; a banner pull's chest, its banner. */
export interface ChestToRoll {
  chestId: string;
  resolved: ResolvedChestType;
  banner?: BannerToRoll;
}

/**
 * The player's standings the banner chests roll from, per pity group: the flag, the counter and the
 * spark points (absent: none yet). The points as read only seed each opening's `sparkPointsAfter`;
 * the write sets them from the points it stored (spark-points.ts).
 */
export type BannerStandings = Map<string, Pick<BannerStanding, 'guaranteedFeatured' | 'pity' | 'sparkPoints'>>;

/** What one roll of a player's chests carries from opening to opening. */
interface RollState {
  seed: ActiveSeed;
  serverSeed: string;
  openedAt: string;
  /** Each chest pity group's counter as the openings move it, and its final value. */
  counter: Map<string, number>;
  finals: Map<string, PityCounter>;
  /** The banner groups' standings read before the roll, and as the pulls move them. */
  standings: BannerStandings;
  banners: Map<string, BannerStandingAfter & { sparkPoints: number }>;
}

/**
 * Rolls the chests in order (one for a single open): consecutive nonces from the pair's next one,
 * each from the HMAC-SHA256 stream of (server seed, client seed, nonce) (docs/fairness.md), from
 * the drop table as the pity counter adjusts it (pity.ts), each group's counter carried from one
 * opening to the next. A banner pull's chests roll as its pulls (pullBanner), the banner group's
 * standing carried the same way.
 */
export function rollOpenings(
  chests: ChestToRoll[],
  seed: ActiveSeed,
  serverSeed: string,
  counters: Map<string, number>,
  standings: BannerStandings = new Map(),
): Rolled {
  const st: RollState = {
    seed,
    serverSeed,
    openedAt: new Date().toISOString(),
    counter: new Map(counters),
    finals: new Map(),
    standings,
    banners: new Map(),
  };
  const openings: OpeningView[] = [];
  for (let i = 0; i < chests.length;) {
    const count = pullLength(chests, i);
    const banner = chests[i]!.banner;
    openings.push(...(banner ? rollPull(st, chests.slice(i, i + count), banner, i) : [rollOne(st, chests[i]!, i)]));
    i += count;
  }
  return { openings, counters: [...st.finals.values()], banners: [...st.banners.values()].map(({ sparkPoints: _points, ...moved }) => moved) };
}

/** How many chests from the i-th roll as one: a ten-pull is ten chests of one banner in a row (a pull's batch); else one. */
function pullLength(chests: ChestToRoll[], i: number): number {
  const banner = chests[i]!.banner;
  if (!banner) return 1;
  let run = 1;
  while (run < 10 && i + run < chests.length && chests[i + run]!.banner?.id === banner.id) run++;
  return run === 10 ? 10 : 1;
}

/** An opening as recorded: its items with their collectibles' presentation, its experience and its stream's inputs. */
function openingOf(st: RollState, chestId: string, resolved: ResolvedChestType, rolled: RolledItem[], nonce: number): OpeningView {
  const items = rolled.map(({ slot, collectibleId, collectionId, rarity }) => {
    const c = resolved.collectibles.get(collectibleId)!;
    return { slot, collectibleId, collectionId, rarity, name: c.name, description: c.description, images: c.images };
  });
  return {
    openingId: randomUUID(),
    chestId,
    chestTypeId: resolved.type.id,
    openedAt: st.openedAt,
    items,
    experience: items.reduce((sum, it) => sum + (resolved.experience.get(it.rarity) ?? 0), 0),
    rulesVersion: resolved.type.contentVersion,
    fairness: { serverSeedHash: st.seed.serverSeedHash, clientSeed: st.seed.clientSeed, nonce },
  };
}

/** The openings of one banner pull of 1 or 10 chests (the first-th chest of the roll first), the group's standing carried. */
function rollPull(st: RollState, pulled: ChestToRoll[], banner: BannerToRoll, first: number): OpeningView[] {
  const { resolved } = pulled[0]!;
  const was = st.standings.get(banner.group);
  const group = st.banners.get(banner.group) ?? {
    group: banner.group,
    guaranteedFeatured: was?.guaranteedFeatured ?? false,
    pity: was?.pity ?? 0,
    sparkPoints: was?.sparkPoints ?? 0,
    pulls: 0,
  };
  const nonce = (k: number) => st.seed.nextNonce + first + k;
  const pull = pullBanner(resolved.table, banner.rules, group, pulled.length, (k) => fairRandom(st.serverSeed, st.seed.clientSeed, nonce(k)));
  Object.assign(group, pull.standing, { pulls: group.pulls + pulled.length });
  st.banners.set(banner.group, group);
  const rule = resolved.table.pity && resolved.type.rules.pity;
  return pull.openings.map((o, k) => ({
    ...openingOf(st, pulled[k]!.chestId, resolved, o.items, nonce(k)),
    ...(rule
      ? {
          pity: {
            group: banner.group,
            rarity: rule.rarity,
            opensSinceBefore: o.pity.before,
            opensSinceAfter: o.pity.after,
            triggered: o.pity.triggered,
          },
        }
      : {}),
    banner: {
      ...(banner.rulesVersion !== undefined ? { rulesVersion: banner.rulesVersion } : {}),
      bannerId: banner.id,
      featured: o.banner.featured,
      guaranteedBefore: o.banner.guaranteedBefore,
      sparkPointsAfter: o.banner.sparkPointsAfter,
      floorRerolled: o.banner.floorRerolled,
    },
  }));
}

/** One chest's opening (the i-th of the roll), its pity group's counter carried. */
function rollOne(st: RollState, { chestId, resolved }: ChestToRoll, i: number): OpeningView {
  const group = pityGroupOf(resolved.type);
  const rule = resolved.table.pity && resolved.type.rules.pity;
  const before = group ? (st.counter.get(group) ?? 0) : 0;
  const nonce = st.seed.nextNonce + i;
  const items = rollTable(tableAtCounter(resolved.table, before), fairRandom(st.serverSeed, st.seed.clientSeed, nonce));
  const after = nextCounter(resolved.table, before, items);
  if (group && rule) {
    st.counter.set(group, after);
    st.finals.set(group, { group, opensSince: after, rarity: rule.rarity, hard: rule.hard });
  }
  return {
    ...openingOf(st, chestId, resolved, items, nonce),
    ...(group && rule
      ? { pity: { group, rarity: rule.rarity, opensSinceBefore: before, opensSinceAfter: after, triggered: before >= rule.hard - 1 } }
      : {}),
  };
}

/** The durable grant of an opening: collections adds the items, players the experience. */
export function grantOf(opening: OpeningView, cmd: { appId: string; playerId: string; notify?: string }, ctx: CallContext): OutboxMessage {
  return outboxMessage(
    OpeningGranted,
    opening.openingId,
    {
      openingId: opening.openingId,
      appId: cmd.appId,
      playerId: cmd.playerId,
      chestTypeId: opening.chestTypeId,
      openedAt: opening.openedAt,
      experience: opening.experience,
      rulesVersion: opening.rulesVersion,
      items: opening.items.map((it) => ({ slot: it.slot, collectibleId: it.collectibleId, collectionId: it.collectionId, rarity: it.rarity })),
      ...(opening.banner
        ? { bannerId: opening.banner.bannerId, banner: { featured: opening.banner.featured, guaranteedBefore: opening.banner.guaranteedBefore } }
        : {}),
    },
    ctx,
    { notify: cmd.notify },
  );
}
