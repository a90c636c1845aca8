import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { applyFieldset, CreditCurrency, ListCurrencies, selfLink } from '@ccs/shared';
import { appIdOf, baseUrl, callContext, jsonApiQuery, parseBody, sendDocument, uuidParam, writeKeysOf } from '../../lib/http.js';
import { documented } from '../../openapi/route-doc.js';
import * as docs from '../../openapi/operations/currencies.js';
import { gatewayErrors } from '../../errors.js';
import { CURRENCY_FIELDS, currencyResource, type CreditResult } from '../../resources/currencies.js';

/** The credit body: the spec's amount pattern, as a string (never a JSON number). */
const CreditBodySchema = z.object({
  amount: z
    .string({
      error: (issue) =>
        issue.input === undefined
          ? 'amount is required, as a decimal string such as "10.50".'
          : 'amount must be a string, such as "10.50", not a number.',
    })
    .max(40, { error: 'amount is too long.' })
    .regex(/^\d+(\.\d{1,2})?$/, { error: 'amount must be digits with at most two decimals, such as "10" or "10.50".' }),
});

/** Query members of the currency list. */
const CURRENCIES_QUERY = { fields: { currency: CURRENCY_FIELDS } };

/** GET /currencies: the app's currencies; with a Bearer token, each carries the player's balance. */
async function listCurrencies(request: FastifyRequest, reply: FastifyReply) {
  appIdOf(request);
  const query = jsonApiQuery(request, CURRENCIES_QUERY);
  const { currencies } = await request.server.bus.request(ListCurrencies, {}, callContext(request));
  const path = request.url.split('?')[0]!;
  return sendDocument(reply, 200, {
    data: currencies.map((c) => applyFieldset(currencyResource(c), query.fields)),
    links: { self: selfLink(baseUrl(request, request.server.gatewayConfig.PUBLIC_BASE_URL), path, (request.query ?? {}) as Record<string, unknown>) },
  });
}

/** POST /currencies/{currency_id}/credit: plain JSON in and out, as the spec shows. */
async function credit(request: FastifyRequest, reply: FastifyReply) {
  const tenant = request.tenant;
  if (!tenant) throw gatewayErrors.missingApiKey();
  const currencyId = uuidParam(request, 'currency_id');
  const keys = writeKeysOf(request);
  const body = parseBody(CreditBodySchema, request.body);
  const result = await request.server.bus.request(
    CreditCurrency,
    { currencyId, amount: body.amount, keyKind: tenant.keyKind, ...keys },
    callContext(request),
  );
  if (result.replayed && keys.idempotencyKey) reply.header('idempotent-replayed', 'true');
  return reply
    .code(200)
    .type('application/json')
    .send({ data: { balance: { amount: result.balance } } } satisfies CreditResult);
}

/** The currencies and balances, under /api/v1 and at the spec's unprefixed alias (app scope: a token adds the balances). */
export async function currencyRoutes(app: FastifyInstance) {
  for (const prefix of ['/api/v1', '']) {
    const list = documented(prefix === '' ? docs.listCurrenciesAlias : docs.listCurrencies, { query: CURRENCIES_QUERY });
    app.get(`${prefix}/currencies`, { config: { openapi: list } }, listCurrencies);
  }
}

/** Crediting the caller's balance, under /api/v1 and at the spec's unprefixed alias (player scope). */
export async function creditRoutes(app: FastifyInstance) {
  for (const prefix of ['/api/v1', '']) {
    // Credit never reads the query string (query: null).
    const creditDoc = documented(prefix === '' ? docs.creditCurrencyAlias : docs.creditCurrency, {
      query: null,
      body: { schema: CreditBodySchema, required: true },
    });
    app.post(`${prefix}/currencies/:currency_id/credit`, { config: { bodyType: 'json', openapi: creditDoc } }, credit);
  }
}
