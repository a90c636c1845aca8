import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { expect } from 'vitest';
import { AdminCreateApp } from '@ccs/shared';
import { jsonApiHeaders, type TestStack } from '../../support/stack.js';
import { expectJsonApi } from '../../support/jsonapi-schema.js';

/** A password that satisfies every registration rule. */
export const STRONG_PASSWORD = 'Str0ng!pass';

/** A fresh email, unique per call. */
export const newEmail = (tag = 'player') => `${tag}-${randomBytes(5).toString('hex')}@example.com`;

/** The registration document of the spec. */
export function registrationBody(email: string, password = STRONG_PASSWORD, confirmation = password) {
  return { data: { type: 'player', attributes: { email, password, password_confirmation: confirmation }, relationships: {} } };
}

/** A login document. */
export const loginBody = (email: string, password = STRONG_PASSWORD) => ({ data: { type: 'player', attributes: { email, password } } });

/** A refresh document. */
export const refreshBody = (refreshToken: string) => ({ data: { type: 'session', attributes: { refresh_token: refreshToken } } });

/** The meta of a session document (registration adds the grants). */
export interface SessionMeta {
  access_token: string;
  refresh_token: string;
  token_type: string;
  expires_in: number;
  created_at: string;
  player_type: string;
  initial_currency?: Record<string, number>;
  welcome_bonus?: Record<string, number | string>;
}

/** What a test keeps of a signed-in player. */
export interface TestPlayer {
  id: string;
  email: string | null;
  accessToken: string;
  refreshToken: string;
  body: {
    data: { id: string; attributes: Record<string, unknown>; relationships: Record<string, { data: unknown }> };
    meta: SessionMeta;
  };
}

function asPlayer(res: { statusCode: number; body: string }, status: number, email: string | null): TestPlayer {
  expect(res.statusCode, res.body).toBe(status);
  const body = JSON.parse(res.body);
  expectJsonApi(body);
  return { id: body.data.id, email, accessToken: body.meta.access_token, refreshToken: body.meta.refresh_token, body };
}

/** Registers a player through the gateway (201 expected). */
export async function register(stack: TestStack, opts: { apiKey?: string; email?: string; token?: string } = {}): Promise<TestPlayer> {
  const email = opts.email ?? newEmail();
  const res = await stack.inject({
    method: 'POST',
    url: '/api/v1/players/register',
    headers: jsonApiHeaders(opts.apiKey ?? stack.apiKey, opts.token),
    payload: registrationBody(email),
  });
  return asPlayer(res, 201, email);
}

/** Creates a guest through the gateway (201 expected). */
export async function createGuest(stack: TestStack, apiKey = stack.apiKey): Promise<TestPlayer> {
  const res = await stack.inject({
    method: 'POST',
    url: '/api/v1/players/anonymous',
    headers: { apikey: apiKey, accept: 'application/vnd.api+json' },
  });
  return asPlayer(res, 201, null);
}

/** Creates a second app through the admin endpoint, as `npm run admin -- create-app` does. */
export async function createOtherApp(stack: TestStack, name = 'Other game') {
  return stack.bus.request(AdminCreateApp, { name }, { requestId: `test-${randomBytes(4).toString('hex')}` });
}

/** The caller's balances by currency code, from GET /api/v1/currencies. */
export async function balances(stack: TestStack, token: string, apiKey = stack.apiKey): Promise<Record<string, string>> {
  const res = await stack.inject({ method: 'GET', url: '/api/v1/currencies', headers: jsonApiHeaders(apiKey, token) });
  expect(res.statusCode, res.body).toBe(200);
  const body = JSON.parse(res.body);
  expectJsonApi(body);
  return Object.fromEntries(
    body.data.map((c: { attributes: { code: string; balance?: { amount: string } } }) => [c.attributes.code, c.attributes.balance?.amount ?? 'none']),
  );
}

/** A client on the stack's database (real Postgres), for checks the API does not expose. */
export async function dbClient(stack: TestStack): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: stack.env.DATABASE_URL });
  await client.connect();
  return client;
}
