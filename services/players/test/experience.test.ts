import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GetMe, OpeningGranted, watchApplied } from '@ccs/shared';
import { openingGrantFactory } from '@ccs/shared/testing';
import { EXPERIENCE_CONSUMER } from '../src/consumers/experience.js';
import { callOf, registeredPlayer, startPlayersTier, type PlayersTier } from './support/players-tier.js';

/**
 * Service tier: players alone, an opening's grant published on the stream as the chests relay
 * does; the experience it carries lands on the player once, read back over players.v1.get_me.
 */
describe('players: the experience of chest openings', () => {
  let tier: PlayersTier;
  let appId: string;

  beforeAll(async () => {
    ({ tier, appId } = await startPlayersTier());
  });
  afterAll(async () => tier?.close());

  const applied = async (id: string, publish: () => Promise<unknown>) => {
    const watch = watchApplied(tier.nc, tier.config.NATS_PREFIX, [id], EXPERIENCE_CONSUMER);
    await publish();
    return (await watch.done(10_000)).has(id);
  };

  it('adds the experience of an opening to the player once, however often it is delivered', async () => {
    const { player } = await registeredPlayer(tier, appId);
    const grant = openingGrantFactory(appId, player.id, { experience: 125 });
    expect(await applied(grant.openingId, () => tier.publish(OpeningGranted, grant, { id: grant.openingId }))).toBe(true);
    // The same opening under another message id (a re-publish the stream cannot recognise).
    const again = `again-${grant.openingId}`;
    expect(await applied(again, () => tier.publish(OpeningGranted, grant, { id: again }))).toBe(true);
    expect((await tier.bus.request(GetMe, {}, callOf(appId, player.id))).experience).toBe(125);
  });
});
