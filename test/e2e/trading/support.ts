import { randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import { readContentFile, type AppContent } from '@ccs/shared';
import { createApp } from '../../../services/chests/test/support/chests.js';
import { expectJsonApi } from '../../support/jsonapi-schema.js';
import { registerThroughGateway } from '../../support/register.js';
import { jsonApiHeaders, type TestStack } from '../../support/stack.js';
import { grantAndWait, openingGrant, waitForContent } from '../collections/support.js';

/** A player of a trading app: id, token and the app's publishable key. */
export interface Trader {
  id: string;
  token: string;
  apiKey: string;
}

/** A trading app: its id and publishable key. */
export interface TradingApp {
  appId: string;
  apiKey: string;
}

const demo = readContentFile();
const RELICS = demo.collections.find((c) => c.id === 'ancient-relics')!;

/**
 * The demo content with a whole-unit `trade_tokens` currency and trading on: commons free to trade,
 * rares for 5 tokens each side, legendaries not tradable; dissolving gives 2 tokens per common and
 * 10 per rare; stamina 3, back one per 8 hours; no duplicate conversion. `change` adjusts the trading rules.
 */
export function tradingContent(change: (t: NonNullable<AppContent['trading']>) => void = () => undefined): AppContent {
  const c: AppContent = structuredClone(demo);
  // Every copy kept (no duplicate conversion): the tests count copies beyond the demo's max_copies.
  delete c.duplicates;
  c.currencies.push({ code: 'trade_tokens', name: 'Trade tokens', max_credit: '100000', whole: true });
  c.trading = {
    enabled: true,
    friends_only: true,
    same_rarity: true,
    rarities: { common: { tradable: true, token_cost: 0 }, rare: { tradable: true, token_cost: 5 }, legendary: { tradable: false, token_cost: 0 } },
    token_currency: 'trade_tokens',
    dissolve: { common: 2, rare: 10 },
    dissolve_keeps: 1,
    stamina: { max: 3, regen_hours: 8 },
    offer_ttl_hours: 72,
    min_account_age_hours: 0,
    daily_offer_cap: 20,
  };
  change(c.trading);
  return c;
}

/** Creates an app with this content and waits until collections has it. */
export async function tradingApp(stack: TestStack, content: AppContent = tradingContent()): Promise<TradingApp> {
  const app = await createApp(stack, content);
  await waitForContent(stack, app.publishableKey, content.collections.length);
  return { appId: app.appId, apiKey: app.publishableKey };
}

/** Registers a player of the app through the gateway. */
export async function trader(stack: TestStack, app: TradingApp): Promise<Trader> {
  const p = await registerThroughGateway(stack, app.apiKey);
  return { id: p.id, token: p.token, apiKey: app.apiKey };
}

/** Gives the player copies of ancient-relics collectibles, as openings would (one grant). */
export async function give(stack: TestStack, app: TradingApp, p: Trader, ids: string[]): Promise<void> {
  const rarity = (id: string) => RELICS.collectibles.find((c) => c.id === id)!.rarity;
  await grantAndWait(
    stack,
    openingGrant(
      app.appId,
      p.id,
      ids.map((id) => ({ collectibleId: id, collectionId: RELICS.id, rarity: rarity(id) })),
    ),
  );
}

/** Makes two players friends through the gateway (each asks the other). */
export async function befriend(stack: TestStack, a: Trader, b: Trader): Promise<void> {
  for (const [from, to] of [
    [a, b],
    [b, a],
  ] as const) {
    const res = await stack.inject({
      method: 'POST',
      url: '/api/v1/players/me/friends',
      headers: jsonApiHeaders(from.apiKey, from.token),
      payload: { data: { type: 'player', id: to.id } },
    });
    expect(res.statusCode, res.body).toBeLessThan(300);
  }
}

/** The copies of each collectible the player holds, from GET /api/v1/players/me/collection. */
export async function copies(stack: TestStack, p: Trader): Promise<Record<string, number>> {
  const res = await stack.inject({ method: 'GET', url: '/api/v1/players/me/collection?page[limit]=100', headers: jsonApiHeaders(p.apiKey, p.token) });
  expect(res.statusCode, res.body).toBe(200);
  const out: Record<string, number> = {};
  for (const r of res.json().data as { id: string; meta: { owned_count: number } }[]) out[r.id] = r.meta.owned_count;
  return out;
}

/** The player's balance of a currency, from GET /api/v1/currencies. */
export async function balance(stack: TestStack, p: Trader, code = 'trade_tokens'): Promise<number> {
  const res = await stack.inject({ method: 'GET', url: '/api/v1/currencies', headers: jsonApiHeaders(p.apiKey, p.token) });
  expect(res.statusCode, res.body).toBe(200);
  const c = (res.json().data as { attributes: { code: string; balance: { amount: string } } }[]).find((x) => x.attributes.code === code);
  return Number(c?.attributes.balance.amount ?? 0);
}

/** POST with the JSON:API headers as the player; the answer is checked to be a JSON:API document. */
export async function post(stack: TestStack, p: Trader, url: string, payload?: object, headers: Record<string, string> = {}) {
  const res = await stack.inject({
    method: 'POST',
    url,
    headers: { ...jsonApiHeaders(p.apiKey, p.token), ...headers },
    ...(payload === undefined ? {} : { payload }),
  });
  if (res.statusCode !== 204) expectJsonApi(res.json());
  return res;
}

/** POST .../dissolve of `quantity` copies. */
export const dissolve = (stack: TestStack, p: Trader, collectibleId: string, quantity: unknown, key?: string) =>
  post(
    stack,
    p,
    `/api/v1/players/me/collection/${encodeURIComponent(collectibleId)}/dissolve`,
    { data: { type: 'dissolve', attributes: { quantity } } },
    key ? { 'idempotency-key': key } : {},
  );

export const newKey = () => `k-${randomUUID()}`;
