import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, jsonApiHeaders, startStack, type TestStack } from '../../support/stack.js';
import { runAdminIn } from '../../../tools/admin/test/support/run-admin.js';
import { register } from '../players/support.js';

/** `npm run admin -- openings`: an operator lists a player's openings, the audit of every roll. */
describe('admin openings', () => {
  let stack: TestStack;
  let appId: string;

  beforeAll(async () => {
    stack = await startStack({ services: ['players', 'wallet', 'chests', 'collections'] });
    appId = JSON.parse((await admin(['list-apps', '--json'])).out).apps[0].appId;
  });
  afterAll(async () => stack?.close());

  const admin = (argv: string[]) => runAdminIn(stack, argv);

  it("lists a player's openings by email or id, with rules version, seed commitment, nonce and pity", async () => {
    const player = await register(stack);
    const starter = player.body.meta.welcome_bonus!.starter_chest;
    const opened = await eventually(async () => {
      const res = await stack.inject({
        method: 'POST',
        url: `/api/v1/chests/${starter}/open`,
        headers: jsonApiHeaders(stack.apiKey, player.accessToken),
      });
      expect(res.statusCode, res.body).toBe(200);
      return res.json();
    });

    const byEmail = await admin(['openings', '--app', appId, '--player', player.email!.toUpperCase(), '--json']);
    expect(byEmail.code, byEmail.err).toBe(0);
    const doc = JSON.parse(byEmail.out);
    expect(doc).toMatchObject({ appId, player: { playerId: player.id, email: player.email, isAnonymous: false }, total: 1 });
    expect(doc.openings[0]).toMatchObject({
      openingId: opened.meta.opening_id,
      rulesVersion: 1,
      fairness: { serverSeedHash: opened.meta.fairness.server_seed_hash, clientSeed: opened.meta.fairness.client_seed, nonce: 0 },
    });
    expect(doc.openings[0].items.map((it: { collectibleId: string }) => it.collectibleId)).toEqual(
      opened.data.collectibles.map((c: { id: string }) => c.id),
    );

    const text = await admin(['openings', '--app', appId, '--player', player.id]);
    expect(text.code, text.err).toBe(0);
    expect(text.out).toContain(`Player ${player.id} (${player.email}): 1 opening, newest first`);
    expect(text.out).toMatch(/^OPENED AT \(UTC\) +OPENING +RULES +ITEMS +PITY +SEED HASH · NONCE +CONVERTED$/m);
    expect(text.out).toContain(`${opened.meta.fairness.server_seed_hash.slice(0, 12)}… #0`);
  });

  it('names an unknown player, and refuses bad options with the usage', async () => {
    const unknown = await admin(['openings', '--app', appId, '--player', 'nobody@example.com']);
    expect(unknown).toMatchObject({ code: 1, out: '' });
    expect(unknown.err).toBe(`App ${appId} has no player "nobody@example.com".`);
    expect((await admin(['openings', '--app', appId])).err).toMatch(/^missing --player/);
    expect((await admin(['openings', '--app', appId, '--player', 'x@example.com', '--limit', '0'])).code).toBe(2);
  });
});
