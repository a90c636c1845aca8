import { randomBytes } from 'node:crypto';
import { expect } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import { AdminCreateApp, readContentFile, type AppContent } from '@ccs/shared';
import { eventually, jsonApiHeaders, type TestStack } from '../../support/stack.js';

/** Who calls: an app's key and, optionally, a player's access token. */
export interface Caller {
  key: string;
  token?: string;
}

type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE';

/** One gateway call as `who`; `json` sends the body as plain application/json (credit). */
export function call(
  stack: TestStack,
  method: Method,
  url: string,
  who: Caller,
  opts: { payload?: unknown; json?: boolean; headers?: Record<string, string> } = {},
): Promise<LightMyRequestResponse> {
  const headers = jsonApiHeaders(who.key, who.token);
  if (opts.json) headers['content-type'] = 'application/json';
  if (opts.payload === undefined) delete headers['content-type'];
  return stack.inject({
    method,
    url,
    headers: { ...headers, ...opts.headers },
    ...(opts.payload === undefined ? {} : { payload: opts.payload as object }),
  });
}

/** Asserts a JSON:API error answer with this status (and code, when given). */
export function expectError(res: LightMyRequestResponse, status: number, code?: string): void {
  expect(res.statusCode, res.body).toBe(status);
  if (code) expect(res.json().errors[0].code, res.body).toBe(code);
}

/** Asserts a 2xx answer and returns its body. */
export function ok(res: LightMyRequestResponse, status = 200): any {
  expect(res.statusCode, res.body).toBe(status);
  return res.statusCode === 204 ? undefined : res.json();
}

/**
 * Content of the second app: the demo app's currencies, players rules and rarities, but its own
 * collection, collectibles (one per rarity) and chest, whose slugs the demo app does not have, so
 * reading them with the demo key can only answer 404 if tenancy holds.
 */
export function otherAppContent(): AppContent {
  const base = readContentFile();
  return {
    ...base,
    // The demo's banner and store products are on chests this app does not have.
    banners: [],
    store: undefined,
    players: { ...base.players, starter_chest_type: 'b-vault-box' },
    collections: [
      {
        id: 'b-vault',
        name: 'Vault of app B',
        description: 'Only app B has it.',
        collectibles: base.rarities.map((r) => ({ id: `b-vault-${r.id}`, name: `B ${r.name}`, description: '', images: [], rarity: r.id })),
      },
    ],
    chests: [
      {
        id: 'b-vault-box',
        name: 'B Vault Box',
        description: 'Only app B sells it.',
        images: [],
        price: { coins: 100 },
        rules: { items: { fixed: 1 }, pools: [{ collection: 'b-vault' }], guarantees: [], bonus: [] },
      },
    ],
  };
}

/** Creates the second app through the players admin subject and waits until every service has its content. */
export async function createOtherApp(stack: TestStack): Promise<{ appId: string; key: string; secretKey: string }> {
  const created = await stack.bus.request(
    AdminCreateApp,
    { name: 'Other tenant', content: otherAppContent() },
    { requestId: `sec-${randomBytes(4).toString('hex')}` },
  );
  const who = { key: created.publishableKey };
  await eventually(async () => {
    expect(ok(await call(stack, 'GET', '/api/v1/chests', who)).data).toHaveLength(1);
    expect(ok(await call(stack, 'GET', '/api/v1/currencies', who)).data.length).toBeGreaterThan(0);
    expect(ok(await call(stack, 'GET', '/api/v1/collections', who)).data).toHaveLength(1);
  }, 20_000);
  return { appId: created.appId, key: created.publishableKey, secretKey: created.secretKey };
}

/** A signed-in player of an app. */
export interface Player extends Caller {
  id: string;
  token: string;
  refreshToken: string;
  starterChest: string;
  email: string | null;
}

/** Registers a player (or creates a guest) in the app of `key` and waits for its starter chest. */
export async function newPlayer(stack: TestStack, key: string, guest = false): Promise<Player> {
  const email = guest ? null : `sec-${randomBytes(5).toString('hex')}@example.com`;
  const res = guest
    ? await stack.inject({ method: 'POST', url: '/api/v1/players/anonymous', headers: { apikey: key, accept: 'application/vnd.api+json' } })
    : await call(
        stack,
        'POST',
        '/api/v1/players/register',
        { key },
        {
          payload: {
            data: { type: 'player', attributes: { email, password: 'Str0ng!pass', password_confirmation: 'Str0ng!pass' }, relationships: {} },
          },
        },
      );
  const body = ok(res, 201);
  const p: Player = {
    key,
    id: body.data.id,
    token: body.meta.access_token,
    refreshToken: body.meta.refresh_token,
    starterChest: body.meta.welcome_bonus.starter_chest,
    email,
  };
  await eventually(async () => expect(await inventoryIds(stack, p)).toContain(p.starterChest));
  return p;
}

/** The ids of the player's unopened chests. */
export async function inventoryIds(stack: TestStack, p: Caller): Promise<string[]> {
  return ok(await call(stack, 'GET', '/api/v1/players/me/chests', p)).data.map((c: { id: string }) => c.id);
}

/** Everything of a player an attacker could change or read: compared before and after each attack. */
export async function snapshot(stack: TestStack, p: Player) {
  const currencies = ok(await call(stack, 'GET', '/api/v1/currencies', p)).data;
  const me = ok(await call(stack, 'GET', '/api/v1/players/me', p)).data;
  const openings = ok(await call(stack, 'GET', '/api/v1/players/me/openings', p));
  const collection = ok(await call(stack, 'GET', '/api/v1/players/me/collection', p)).meta;
  const friends = ok(await call(stack, 'GET', '/api/v1/players/me/friends', p)).data;
  return {
    balances: Object.fromEntries(currencies.map((c: any) => [c.attributes.code, c.attributes.balance.amount])),
    privacy: me.attributes.privacy,
    chests: await inventoryIds(stack, p),
    openings: openings.data.map((o: { id: string }) => o.id),
    copies: collection.total_copies,
    friends: friends.map((f: any) => `${f.id}:${f.meta.status}`).sort(),
  };
}
