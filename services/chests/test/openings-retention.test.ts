import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readContentFile } from '@ccs/shared';
import { deleteOpeningsOlderThan } from '../src/workers/openings-retention.js';
import { chestsApp, chestsSql, grantedChests, openChest, startChestsTier, type ChestsTier } from './support/chests-tier.js';

// Openings retention (OPENINGS_RETENTION_DAYS) and the CN rule pack's draw records kept 90 days
// (docs/design.md §7): an app whose content applies the pack keeps its openings at least that long.
describe('openings retention (service tier)', () => {
  let tier: ChestsTier;
  let plain: string;
  let chinese: string;
  beforeAll(async () => {
    ({ tier } = await startChestsTier());
    // The demo content applies every pack: the plain app applies none, the other only CN.
    const plainContent = structuredClone(readContentFile());
    plainContent.compliance = { ...plainContent.compliance!, rule_packs: [] };
    ({ appId: plain } = await chestsApp(tier, { content: plainContent }));
    const content = structuredClone(readContentFile());
    content.compliance = { ...content.compliance!, rule_packs: ['CN'] };
    ({ appId: chinese } = await chestsApp(tier, { content }));
  });
  afterAll(async () => tier?.close());

  /** Opens a chest of a fresh player of the app with an Idempotency-Key, and dates the opening and its key `daysAgo` days back. */
  async function openingsAged(appId: string, daysAgo: number): Promise<string[]> {
    const { playerId, chests } = await grantedChests(tier, appId, { n: 1 });
    const opened = await openChest(tier, appId, playerId, chests[0]!, `aged-${daysAgo}`);
    await chestsSql(tier, `UPDATE openings SET opened_at = now() - make_interval(days => $2) WHERE id = $1`, [opened.openingId, daysAgo]);
    await chestsSql(tier, `UPDATE opening_keys SET created_at = now() - make_interval(days => $2) WHERE opening_ids = ARRAY[$1::uuid]`, [
      opened.openingId,
      daysAgo,
    ]);
    return [opened.openingId];
  }
  const keysLeft = async (ids: string[]) =>
    (await chestsSql<{ id: string }>(tier, 'SELECT opening_ids[1] AS id FROM opening_keys WHERE opening_ids[1] = ANY($1::uuid[])', [ids])).map(
      (r) => r.id,
    );
  const left = async (ids: string[]) =>
    (await chestsSql<{ id: string }>(tier, 'SELECT id FROM openings WHERE id = ANY($1::uuid[])', [ids])).map((r) => r.id);

  it('deletes what is past the retention, but keeps 90 days of draw records for an app under the CN pack', async () => {
    const plainOld = await openingsAged(plain, 60);
    const plainNew = await openingsAged(plain, 10);
    const cnOld = await openingsAged(chinese, 60);
    const cnAncient = await openingsAged(chinese, 120);
    // A retention of 30 days: the plain app loses its 60-day-old opening; the CN app keeps it (90 days), not the 120-day-old one.
    await deleteOpeningsOlderThan(tier.service.deps.pool, 30);
    expect(await left([...plainOld, ...plainNew, ...cnOld, ...cnAncient])).toEqual(expect.arrayContaining([...plainNew, ...cnOld]));
    expect(await left([...plainOld, ...cnAncient])).toEqual([]);
    // The Idempotency-Keys go with their openings.
    expect(await keysLeft([...plainOld, ...plainNew, ...cnOld, ...cnAncient])).toEqual(expect.arrayContaining([...plainNew, ...cnOld]));
    expect(await keysLeft([...plainOld, ...cnAncient])).toEqual([]);
  });
});
