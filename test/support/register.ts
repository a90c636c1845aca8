import { randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import { jsonApiHeaders, type TestStack } from './stack.js';

/** A password every server-side rule accepts. */
export const TEST_PASSWORD = 'Str0ng!pass';

/** A player registered through the gateway, as a client does it. */
export interface RegisteredPlayer {
  id: string;
  token: string;
  starterChestId: string;
  apiKey: string;
}

/** Registers a new player of the stack's demo app (or of `apiKey`'s app) through the gateway (201 expected). */
export async function registerThroughGateway(stack: TestStack, apiKey = stack.apiKey): Promise<RegisteredPlayer> {
  const email = `p-${randomUUID()}@example.com`;
  const res = await stack.inject({
    method: 'POST',
    url: '/api/v1/players/register',
    headers: jsonApiHeaders(apiKey),
    payload: { data: { type: 'player', attributes: { email, password: TEST_PASSWORD, password_confirmation: TEST_PASSWORD }, relationships: {} } },
  });
  expect(res.statusCode, res.body).toBe(201);
  const body = res.json();
  return { id: body.data.id, token: body.meta.access_token, starterChestId: body.meta.welcome_bonus.starter_chest, apiKey };
}
