import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, jsonApiHeaders, startStack, type TestStack } from '../../support/stack.js';
import { expectError } from '../../support/jsonapi-schema.js';
import { inventory, open, registerPlayer, type Player } from '../../../services/chests/test/support/chests.js';

// The HTTP side of verifiable randomness: the refusals of the verification and fairness routes.
// The openings, their recomputation by scripts/verify-opening.mjs, pity and the seed at rest are
// chests' own (services/chests/test/fairness.test.ts, service tier).
describe('verifiable randomness and pity, through the gateway', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startStack();
  });
  afterAll(async () => stack?.close());

  const send = (p: Player, method: 'GET' | 'POST' | 'PATCH', url: string, payload?: object) =>
    stack.inject({ method, url, headers: jsonApiHeaders(p.apiKey, p.token), ...(payload ? { payload } : {}) });

  it('answers 409 seed_not_revealed before the rotation, 404 for an opening of another player, 422 for a bad client seed', async () => {
    const p = await registerPlayer(stack);
    const q = await registerPlayer(stack);
    await eventually(async () => expect((await inventory(stack, p)).meta.total_chests).toBe(1));
    const opened = (await open(stack, p, p.starterChestId)).json();
    expectError(await send(p, 'GET', `/api/v1/openings/${opened.meta.opening_id}/verification`), 409, 'seed_not_revealed');
    expectError(await send(q, 'GET', `/api/v1/openings/${opened.meta.opening_id}/verification`), 404, 'opening_not_found');
    expectError(await send(p, 'GET', '/api/v1/openings/not-a-uuid/verification'), 400, 'invalid_id');
    for (const bad of ['', 'has space', 'x'.repeat(65), 'semi;colon']) {
      const errors = expectError(
        await send(p, 'PATCH', '/api/v1/players/me/fairness', { data: { type: 'fairness', attributes: { client_seed: bad } } }),
        422,
      );
      expect(errors[0]!.source?.pointer).toBe('/data/attributes/client_seed');
    }
    // Nothing changed: the pair is the same and still unrevealed.
    const rotated = (await send(p, 'POST', '/api/v1/players/me/fairness/rotate')).json();
    expect(rotated.meta.revealed).toMatchObject({ server_seed_hash: opened.meta.fairness.server_seed_hash, last_nonce: 0 });
    const v = (await send(p, 'GET', `/api/v1/openings/${opened.meta.opening_id}/verification`)).json();
    expect(v.data.attributes.matches).toBe(true);
    // Without a token: 401.
    expectError(await stack.inject({ method: 'GET', url: '/api/v1/players/me/fairness', headers: { apikey: stack.apiKey } }), 401);
  });
});
