import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AdminCreditPlayer, AdminFindPlayer, CurrencyCodeSchema } from '@ccs/shared';
import { z } from 'zod';
import { ActionMeta } from './studio-note.js';
import { jsonApiQuery, parseBody, sendDocument, uuidParam } from '../../lib/http.js';
import { documented, NO_QUERY } from '../../openapi/route-doc.js';
import * as docs from '../../openapi/operations/studio-credits.js';
import { gatewayErrors } from '../../errors.js';
import { studioCreditDocument } from '../../resources/studio-credits.js';

/**
 * The studio's grants of currency (docs/operations.md, "Admin API"): with the app's secret key,
 * any currency of the app (paid ones included, which players can never credit themselves) to one
 * of its players, once per reference. Registered in the studio scope by studioRoutes, so every
 * call is in the audit log.
 */

/** POST body: what to grant, and the studio's reference of it (a store receipt, an order id). */
export const StudioCreditBody = z.object({
  data: z.object({
    type: z.literal('credit', { error: 'data.type must be "credit".' }),
    attributes: z
      .object({
        currency: z
          .string({ error: 'currency is required: the code of one of the app\'s currencies, e.g. "gems".' })
          .min(1, { error: 'currency is required: the code of one of the app\'s currencies, e.g. "gems".' })
          .max(64, { error: 'currency is at most 64 characters: the code of one of the app\'s currencies, e.g. "gems".' })
          .describe('The code of one of the app\'s currencies (any case), e.g. "gems"; paid currencies included.'),
        amount: z
          .string({
            error: (issue) =>
              issue.input === undefined
                ? 'amount is required, as a decimal string such as "100" or "4.99".'
                : 'amount must be a string, such as "100" or "4.99", not a number.',
          })
          .max(40, { error: 'amount is too long.' })
          .regex(/^\d+(\.\d{1,2})?$/, { error: 'amount must be digits with at most two decimals, such as "100" or "4.99".' })
          .describe("The amount to add: a decimal string with at most two decimals, above zero and at most the currency's maximum credit."),
        reference: z
          .string({ error: "reference is required: the studio's id of this grant (a store receipt or order id), 1 to 200 characters." })
          .min(1, { error: "reference must not be empty: the studio's id of this grant (a store receipt or order id), 1 to 200 characters." })
          .max(200, { error: 'reference is at most 200 characters.' })
          .describe("The studio's id of this grant, e.g. a store receipt or order id (1 to 200 characters): the grant is made once per reference."),
      })
      .strict(),
  }),
  meta: ActionMeta,
});

/** POST /api/v1/admin/players/{id}/credits: grants currency to a player of the key's app, once per reference. */
async function grant(request: FastifyRequest, reply: FastifyReply) {
  jsonApiQuery(request, NO_QUERY);
  const playerId = uuidParam(request, 'id');
  const a = parseBody(StudioCreditBody, request.body).data.attributes;
  const currency = a.currency.toLowerCase();
  // Only a well-formed code can be a currency of the app.
  if (!CurrencyCodeSchema.safeParse(currency).success) throw gatewayErrors.currencyNotFound();
  // What no currency can take is refused before the player is looked up (the wallet checks the
  // currency's own maximum): zero, and more than the wallet's NUMERIC(20,2) holds (18 integer digits).
  if (!/[1-9]/.test(a.amount)) throw gatewayErrors.amountNotPositive();
  if (a.amount.split('.')[0]!.replace(/^0+/, '').length > 18) throw gatewayErrors.amountAboveMaximum();
  const appId = request.tenant!.appId;
  const ctx = { requestId: request.id, appId };
  const bus = request.server.bus;
  // Another app's player (or none) is not found: the wallet itself knows no players.
  await bus.request(AdminFindPlayer, { appId, playerId }, ctx);
  const r = await bus.request(AdminCreditPlayer, { appId, playerId, currency, amount: a.amount, reference: a.reference }, ctx);
  reply.header('cache-control', 'no-store');
  return sendDocument(reply, r.replayed ? 200 : 201, studioCreditDocument(r, playerId));
}

/** Registers the grant route in the studio scope (called by studioRoutes, so it shares its audit hook). */
export async function studioCreditRoutes(app: FastifyInstance) {
  app.post(
    '/api/v1/admin/players/:id/credits',
    {
      config: {
        bodyType: 'jsonapi',
        openapi: documented(docs.adminCreditPlayer, { query: NO_QUERY, body: { schema: StudioCreditBody, required: true } }),
      },
    },
    grant,
  );
}
