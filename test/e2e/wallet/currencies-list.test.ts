import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AdminCreateApp, readContentFile } from '@ccs/shared';
import { eventually, jsonApiHeaders, startStack, type TestStack } from '../../support/stack.js';
import { expectError, expectJsonApi } from '../../support/jsonapi-schema.js';
import { registerPlayer } from './support.js';

interface CurrencyDoc {
  data: { type: string; id: string; attributes: { code: string; name: string; balance?: { amount: string } }; relationships: object }[];
  links: { self: string };
}

describe('GET /api/v1/currencies and GET /currencies', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startStack();
  });
  afterAll(async () => stack?.close());

  const list = async (url: string, apiKey: string, token?: string): Promise<CurrencyDoc> => {
    const res = await stack.inject({ method: 'GET', url, headers: jsonApiHeaders(apiKey, token) });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['content-type']).toContain('application/vnd.api+json');
    const body = res.json();
    expectJsonApi(body);
    return body;
  };
  const balancesOf = (doc: CurrencyDoc) => Object.fromEntries(doc.data.map((c) => [c.attributes.code, c.attributes.balance?.amount]));

  it("lists the demo app's currencies as JSON:API resources with UUID ids, no balance without a token", async () => {
    const doc = await eventually(async () => {
      const d = await list('/api/v1/currencies', stack.apiKey);
      expect(d.data).toHaveLength(readContentFile().currencies.length);
      return d;
    });
    expect(doc.data.map((c) => c.attributes)).toEqual(readContentFile().currencies.map((c) => ({ code: c.code, name: c.name })));
    for (const c of doc.data) {
      expect(c.type).toBe('currency');
      expect(c.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
      expect(c.relationships).toEqual({});
    }
    expect(doc.links.self).toMatch(/^https?:\/\/[^/]+\/api\/v1\/currencies$/);
  });

  it("shows a new player's balances: initial currency plus welcome bonus from the content file", async () => {
    const rules = readContentFile().players;
    const expected = {
      coins: `${rules.initial_currency.coins! + rules.welcome_bonus.coins!}.00`,
      gems: `${rules.initial_currency.gems! + rules.welcome_bonus.gems!}.00`,
      vault_key: '0.00',
    };
    const player = await registerPlayer(stack);
    const doc = await eventually(async () => {
      const d = await list('/api/v1/currencies', stack.apiKey, player.token);
      expect(balancesOf(d)).toEqual(expected);
      return d;
    });
    expect(doc.data.map((c) => c.attributes.name)).toEqual(readContentFile().currencies.map((c) => c.name));
  });

  it('serves the same list at the unprefixed alias, which still needs the apikey', async () => {
    const player = await registerPlayer(stack);
    const prefixed = await list('/api/v1/currencies', stack.apiKey, player.token);
    const alias = await list('/currencies', stack.apiKey, player.token);
    expect(alias.data).toEqual(prefixed.data);
    expect(alias.links.self).toMatch(/\/currencies$/);
    expectError(await stack.inject({ method: 'GET', url: '/currencies' }), 401, 'missing_api_key');
    expectError(await stack.inject({ method: 'GET', url: '/currencies', headers: { apikey: 'nope' } }), 401, 'invalid_api_key');
  });

  it('supports a sparse fieldset and refuses unknown query parameters and fields with 400', async () => {
    const player = await registerPlayer(stack);
    const doc = await list('/api/v1/currencies?fields[currency]=code,balance', stack.apiKey, player.token);
    for (const c of doc.data) expect(Object.keys(c.attributes).sort()).toEqual(['balance', 'code']);
    expect(doc.links.self).toContain('fields%5Bcurrency%5D=code%2Cbalance');
    const headers = jsonApiHeaders(stack.apiKey, player.token);
    const bad = async (url: string, parameter: string) => {
      const errors = expectError(await stack.inject({ method: 'GET', url, headers }), 400);
      expect(errors[0]!.source).toEqual({ parameter });
    };
    await bad('/api/v1/currencies?fields[currency]=secret', 'fields[currency]');
    await bad('/api/v1/currencies?fields[chest]=name', 'fields[chest]');
    await bad('/api/v1/currencies?include=balances', 'include');
    await bad('/api/v1/currencies?sort=code', 'sort');
    await bad('/currencies?color=blue', 'color');
  });

  it('answers 401 for a malformed or foreign Bearer token', async () => {
    const res = await stack.inject({ method: 'GET', url: '/api/v1/currencies', headers: jsonApiHeaders(stack.apiKey, 'not.a.jwt') });
    expectError(res, 401, 'invalid_token');
  });

  it("shows another app only its own currencies, and refuses a token of one app with another app's key", async () => {
    const created = await stack.bus.request(AdminCreateApp, { name: 'Other Game' }, { requestId: 'wallet-list-other-app' });
    const other = await eventually(async () => {
      const d = await list('/api/v1/currencies', created.publishableKey);
      expect(d.data).toHaveLength(readContentFile().currencies.length);
      return d;
    });
    const demo = await list('/api/v1/currencies', stack.apiKey);
    const demoIds = new Set(demo.data.map((c) => c.id));
    for (const c of other.data) expect(demoIds.has(c.id)).toBe(false);

    const player = await registerPlayer(stack);
    const res = await stack.inject({ method: 'GET', url: '/api/v1/currencies', headers: jsonApiHeaders(created.publishableKey, player.token) });
    expectError(res, 401, 'invalid_token');
  });
});
