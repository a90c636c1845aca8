import { randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import { jsonApiHeaders, type TestStack } from '../../../../test/support/stack.js';
import { TEST_PASSWORD } from '../../../../test/support/register.js';
import type { Player } from './chests.js';

/** What a player declares for the compliance gates; undefined members are not given. */
export interface Declared {
  country?: string;
  birth_year?: number;
}

/** PATCH /api/v1/players/me with these attributes (the raw response). */
export function patchMe(stack: TestStack, p: Pick<Player, 'token' | 'apiKey'>, attributes: Record<string, unknown>) {
  return stack.inject({
    method: 'PATCH',
    url: '/api/v1/players/me',
    headers: jsonApiHeaders(p.apiKey, p.token),
    payload: { data: { type: 'player', attributes } },
  });
}

/**
 * Registers a player of `apiKey`'s app who declares `declared`, either in the registration body or
 * right after with PATCH /players/me (both must have the same effect on the gates).
 */
export async function registerDeclaring(stack: TestStack, declared: Declared, via: 'register' | 'patch', apiKey = stack.apiKey): Promise<Player> {
  const attributes = {
    email: `c-${randomUUID()}@example.com`,
    password: TEST_PASSWORD,
    password_confirmation: TEST_PASSWORD,
    ...(via === 'register' ? declared : {}),
  };
  const res = await stack.inject({
    method: 'POST',
    url: '/api/v1/players/register',
    headers: jsonApiHeaders(apiKey),
    payload: { data: { type: 'player', attributes, relationships: {} } },
  });
  expect(res.statusCode, res.body).toBe(201);
  const body = res.json();
  const p: Player = { id: body.data.id, token: body.meta.access_token, starterChestId: body.meta.welcome_bonus.starter_chest, apiKey };
  if (via === 'patch' && Object.keys(declared).length) {
    const patched = await patchMe(stack, p, { ...declared });
    expect(patched.statusCode, patched.body).toBe(200);
  }
  return p;
}

/** The catalog as the player sees it: chest name → meta (price, purchasable). */
export async function catalogMeta(stack: TestStack, p?: Pick<Player, 'token'>, apiKey = stack.apiKey) {
  const res = await stack.inject({ method: 'GET', url: '/api/v1/chests?page[limit]=100', headers: jsonApiHeaders(apiKey, p?.token) });
  expect(res.statusCode, res.body).toBe(200);
  const data = res.json().data as { attributes: { name: string }; meta: { price: Record<string, number>; purchasable?: Record<string, boolean> } }[];
  return { res, meta: Object.fromEntries(data.map((c) => [c.attributes.name, c.meta])) };
}
