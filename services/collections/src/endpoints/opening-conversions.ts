import { appOf, endpoint, OpeningConversions, type Pool } from '@ccs/shared';
import { conversionsOf } from '../repositories/duplicates-repo.js';

/**
 * collections.v1.opening_conversions: what each of these openings of the app converted, for the
 * openings collections has applied (the others are absent: their conversions are not known yet).
 * One indexed query; asked by chests for the openings audit and replayed opening answers.
 */
export function openingConversionsEndpoint(pool: Pool) {
  return endpoint(OpeningConversions, async (req, ctx) => {
    if (req.openingIds.length === 0) return { openings: [] };
    const found = await conversionsOf(pool, appOf(ctx), req.openingIds);
    return { openings: [...found].map(([openingId, converted]) => ({ openingId, converted })) };
  });
}
