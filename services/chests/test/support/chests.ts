import { randomBytes, randomUUID } from 'node:crypto';
import pg from 'pg';
import { expect } from 'vitest';
import { AdminCreateApp, AdminCreditPlayer, ChestGrant, readContentFile, ResolveApiKey, type AppContent } from '@ccs/shared';
import { eventually, jsonApiHeaders, type TestStack } from '../../../../test/support/stack.js';
import { expectJsonApi } from '../../../../test/support/jsonapi-schema.js';
import { registerThroughGateway } from '../../../../test/support/register.js';

/** A registered player of a test: id, access token and the starter chest's inventory id. */
export interface Player {
  id: string;
  token: string;
  starterChestId: string;
  apiKey: string;
}

/** Registers a player through the gateway, as the spec shows. */
export const registerPlayer = (stack: TestStack, apiKey = stack.apiKey): Promise<Player> => registerThroughGateway(stack, apiKey);

/** Creates an anonymous guest through the gateway. */
export async function createGuest(stack: TestStack, apiKey = stack.apiKey): Promise<Player> {
  const res = await stack.inject({
    method: 'POST',
    url: '/api/v1/players/anonymous',
    headers: { apikey: apiKey, accept: 'application/vnd.api+json' },
  });
  expect(res.statusCode, res.body).toBe(201);
  const body = res.json();
  return { id: body.data.id, token: body.meta.access_token, starterChestId: body.meta.welcome_bonus.starter_chest, apiKey };
}

/** The app id behind an API key. */
export async function appIdOf(stack: TestStack, apiKey = stack.apiKey): Promise<string> {
  const r = await stack.bus.request(ResolveApiKey, { apiKey }, { requestId: `t-${randomBytes(4).toString('hex')}` });
  return r.appId;
}

/** A second app (through the players admin endpoint), optionally with its own content. */
export async function createApp(stack: TestStack, content?: AppContent) {
  return stack.bus.request(
    AdminCreateApp,
    { name: `Other ${randomBytes(3).toString('hex')}`, content },
    { requestId: `t-${randomBytes(4).toString('hex')}` },
  );
}

/** GET with the JSON:API headers, as a player or anonymously. */
export function get(stack: TestStack, url: string, token?: string, apiKey = stack.apiKey) {
  return stack.inject({ method: 'GET', url, headers: jsonApiHeaders(apiKey, token) });
}

/** The player's inventory document (200 and valid JSON:API expected). */
export async function inventory(stack: TestStack, p: Player, owner = 'me') {
  const res = await get(stack, `/api/v1/players/${owner}/chests`, p.token, p.apiKey);
  expect(res.statusCode, res.body).toBe(200);
  const body = res.json();
  expectJsonApi(body);
  return body;
}

/**
 * Waits until the player's starter chest (a durable grant) is in the inventory. Registration
 * answers once it is, within GRANT_WAIT_MS: a test needs this only when the player may have
 * registered before chests had the app's content (right after the stack or the app started) or
 * while chests was down.
 */
export async function waitForStarterChest(stack: TestStack, p: Player): Promise<void> {
  await eventually(async () => {
    const body = await inventory(stack, p);
    expect(body.data.map((c: { id: string }) => c.id)).toContain(p.starterChestId);
  }, 20_000);
}

/** The catalog chests by slug-like name → id (from GET /api/v1/chests). */
export async function catalogIds(stack: TestStack, apiKey = stack.apiKey): Promise<Record<string, string>> {
  const res = await get(stack, '/api/v1/chests?page[limit]=100', undefined, apiKey);
  expect(res.statusCode, res.body).toBe(200);
  return Object.fromEntries(res.json().data.map((c: { id: string; attributes: { name: string } }) => [c.attributes.name, c.id]));
}

/** The default catalog's ids by name, once the content has landed in the chests service (every type of the file). */
export function defaultCatalogIds(stack: TestStack): Promise<Record<string, string>> {
  const types = readContentFile().chests.length;
  return eventually(async () => {
    const found = await catalogIds(stack);
    expect(Object.keys(found)).toHaveLength(types);
    return found;
  }, 20_000);
}

/** The caller's currencies: code → {id, balance}. */
export async function wallet(stack: TestStack, p: Player): Promise<Record<string, { id: string; balance: string }>> {
  const res = await get(stack, '/api/v1/currencies', p.token, p.apiKey);
  expect(res.statusCode, res.body).toBe(200);
  return Object.fromEntries(
    res
      .json()
      .data.map((c: { id: string; attributes: { code: string; balance: { amount: string } } }) => [
        c.attributes.code,
        { id: c.id, balance: c.attributes.balance.amount },
      ]),
  );
}

/** Credits the player through the spec's credit endpoint. */
export async function credit(stack: TestStack, p: Player, currencyId: string, amount: string): Promise<void> {
  const res = await stack.inject({
    method: 'POST',
    url: `/api/v1/currencies/${currencyId}/credit`,
    headers: { apikey: p.apiKey, authorization: `Bearer ${p.token}`, 'content-type': 'application/json' },
    payload: { amount },
  });
  expect(res.statusCode, res.body).toBe(200);
}

/**
 * Gives the player currency as the studio does (wallet.v1.admin_credit, the admin API's grant):
 * the way to a paid currency (gems), which the player credit endpoint refuses (403 paid_currency).
 */
export async function studioGrant(stack: TestStack, p: Player, currency: string, amount: string): Promise<void> {
  const appId = await appIdOf(stack, p.apiKey);
  const reference = `test-${randomUUID()}`;
  await stack.bus.request(AdminCreditPlayer, { appId, playerId: p.id, currency, amount, reference }, { requestId: reference, appId });
}

/** Buys chests through the gateway (the raw response). */
export function purchase(stack: TestStack, p: Player, chestTypeId: string, currency: string, quantity?: number, idempotencyKey?: string) {
  return stack.inject({
    method: 'POST',
    url: `/api/v1/chests/${chestTypeId}/purchase`,
    headers: { ...jsonApiHeaders(p.apiKey, p.token), ...(idempotencyKey ? { 'idempotency-key': idempotencyKey } : {}) },
    payload: { data: { type: 'purchase', attributes: { currency, ...(quantity === undefined ? {} : { quantity }) } } },
  });
}

/** Opens a chest through the gateway (the raw response). */
export function open(stack: TestStack, p: Player, chestId: string, opts: { method?: 'GET' | 'POST'; idempotencyKey?: string } = {}) {
  const headers: Record<string, string> = { apikey: p.apiKey, authorization: `Bearer ${p.token}`, accept: 'application/vnd.api+json' };
  if (opts.idempotencyKey) headers['idempotency-key'] = opts.idempotencyKey;
  return stack.inject({ method: opts.method ?? 'GET', url: `/api/v1/chests/${chestId}/open`, headers });
}

/** Runs one query on the stack's database (real Postgres), for checks the API does not expose. */
export async function sql<T extends pg.QueryResultRow>(stack: TestStack, text: string, params: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: stack.env.DATABASE_URL });
  await client.connect();
  try {
    return (await client.query<T>(text, params)).rows;
  } finally {
    await client.end();
  }
}

/**
 * Grants `n` chests of a catalog type (by slug) straight into a player's inventory, as a studio
 * grant would (the durable ChestGrant message), and waits until they are all there.
 */
export async function grantChests(stack: TestStack, p: Player, slug: string, n: number): Promise<string[]> {
  const appId = await appIdOf(stack, p.apiKey);
  const js = stack.nc.jetstream();
  const chests: string[] = [];
  for (let i = 0; i < n; i++) {
    const id = randomUUID();
    chests.push(id);
    const grant = ChestGrant.payload.parse({ appId, playerId: p.id, inventoryChestId: id, chestTypeId: slug, source: 'special' });
    await js.publish(`${stack.env.NATS_PREFIX}.${ChestGrant.subject}`, JSON.stringify(grant), { msgID: randomUUID() });
  }
  // Waits for these chests by id: other chests may arrive meanwhile (a collection reward of the
  // player's earlier openings), so the inventory's total is no measure.
  await eventually(async () => {
    const rows = await sql<{ n: number }>(stack, 'SELECT count(*)::int AS n FROM chests.inventory_chests WHERE id = ANY($1::uuid[])', [chests]);
    expect(rows[0]!.n).toBe(n);
  }, 20_000);
  return chests;
}
