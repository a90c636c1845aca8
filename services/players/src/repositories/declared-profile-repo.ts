import type { Queryable } from '@ccs/shared';
import { z } from 'zod';

/** A player's declared profile as the rules read it, under the row's lock. */
export interface DeclaredProfile {
  country: string | null;
  birthYear: number | null;
  countryChangedAt: Date | null;
}

/** The player's declared profile, its row locked for the transaction (undefined: no such player in the app). */
export async function lockDeclaredProfile(tx: Queryable, appId: string, playerId: string): Promise<DeclaredProfile | undefined> {
  const r = await tx.query<{ country: string | null; birth_year: number | null; country_changed_at: Date | null }>(
    'SELECT country, birth_year, country_changed_at FROM players WHERE app_id = $1 AND id = $2 FOR UPDATE',
    [appId, playerId],
  );
  const row = r.rows[0];
  return row && { country: row.country, birthYear: row.birth_year, countryChangedAt: row.country_changed_at };
}

const Regions = z.array(z.string().regex(/^[A-Z]{2}$/));

/**
 * The blocked regions of the app's current content (its compliance rules), from the content
 * versions this service keeps; none when no content with compliance rules is stored.
 */
export async function blockedRegionsOf(db: Queryable, appId: string): Promise<string[]> {
  const r = await db.query<{ regions: unknown }>(
    `SELECT c.content -> 'compliance' -> 'blocked_regions' AS regions FROM app_contents c JOIN apps a ON a.id = c.app_id
      WHERE c.app_id = $1 AND c.version <= a.content_version ORDER BY c.version DESC LIMIT 1`,
    [appId],
  );
  const parsed = Regions.safeParse(r.rows[0]?.regions);
  return parsed.success ? parsed.data : [];
}

/** Writes a declared profile change (absent members stay; `null` clears, for the studio); the cooldown starts when `countryChanged`. */
export async function writeDeclaredProfile(
  tx: Queryable,
  appId: string,
  playerId: string,
  change: { country?: string | null; birthYear?: number | null },
  countryChanged: boolean,
): Promise<void> {
  const sets: string[] = [];
  const params: unknown[] = [appId, playerId];
  if (change.country !== undefined) {
    params.push(change.country);
    sets.push(`country = $${params.length}`);
  }
  if (change.birthYear !== undefined) {
    params.push(change.birthYear);
    sets.push(`birth_year = $${params.length}`);
  }
  if (countryChanged) sets.push('country_changed_at = now()');
  if (!sets.length) return;
  await tx.query(`UPDATE players SET ${sets.join(', ')} WHERE app_id = $1 AND id = $2`, params);
}
