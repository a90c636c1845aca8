import type { OpeningView, Queryable } from '@ccs/shared';
import { recordBannerStandings } from '../repositories/banners-repo.js';
import { recordSparkPointsAfter } from '../repositories/openings-repo.js';
import type { BannerStandingAfter, ChestToRoll } from './roll-openings.js';

/**
 * Writes the standings a roll's banner pulls moved (recordBannerStandings, in the openings'
 * transaction, after their write) and answers the openings with each banner opening's
 * `sparkPointsAfter` as stored (withStoredSparkPoints). The roll counted from the points read
 * before the write; a spark exchange committed between that read and this write took some, so
 * then the recorded openings are corrected too. Once the standing's row is written it stays
 * locked until the commit: the points answered, recorded and stored are the same.
 */
export async function storeBannerStandings(
  db: Queryable,
  who: { appId: string; playerId: string },
  moved: BannerStandingAfter[],
  chests: ChestToRoll[],
  openings: OpeningView[],
): Promise<OpeningView[]> {
  const stored = await recordBannerStandings(db, who.appId, who.playerId, moved);
  const answered = withStoredSparkPoints(openings, chests, stored);
  const changed = answered.filter((o, i) => o !== openings[i]);
  if (changed.length) {
    await recordSparkPointsAfter(
      db,
      who.appId,
      changed.map((o) => ({ openingId: o.openingId, sparkPointsAfter: o.banner!.sparkPointsAfter })),
    );
  }
  return answered;
}

/**
 * The openings with each banner opening's `sparkPointsAfter` counted back from its pity group's
 * points as stored after the roll (`stored`): the group's last opening has them, each earlier one
 * one less per opening of the group after it (each pull adds a point). An opening whose value
 * already agrees is kept as it is (the same object).
 */
function withStoredSparkPoints(openings: OpeningView[], chests: ChestToRoll[], stored: Map<string, number>): OpeningView[] {
  const groupOf = new Map(chests.flatMap((c) => (c.banner ? [[c.chestId, c.banner.group] as const] : [])));
  const later = new Map<string, number>();
  const answered = [...openings];
  for (let i = answered.length - 1; i >= 0; i--) {
    const o = answered[i]!;
    const group = groupOf.get(o.chestId);
    const points = group === undefined ? undefined : stored.get(group);
    if (!o.banner || group === undefined || points === undefined) continue;
    const after = later.get(group) ?? 0;
    later.set(group, after + 1);
    if (o.banner.sparkPointsAfter !== points - after) answered[i] = { ...o, banner: { ...o.banner, sparkPointsAfter: points - after } };
  }
  return answered;
}
