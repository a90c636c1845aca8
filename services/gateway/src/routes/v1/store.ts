import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import {
  AdminFindPlayer,
  AdminGoogleCredentials,
  AdminPlayerStore,
  AdminSetGoogleCredentials,
  AdminStoreProducts,
  AppleStoreNotification,
  GoogleStoreNotification,
  JSONAPI_MEDIA_TYPE,
  PURCHASE_TOKEN_MAX,
  SIGNED_TRANSACTION_MAX,
  VerifyStorePurchase,
} from '@ccs/shared';
import { callContext, jsonApiQuery, parseBody, sendDocument, uuidParam } from '../../lib/http.js';
import { documented, NO_QUERY } from '../../openapi/route-doc.js';
import * as docs from '../../openapi/operations/store.js';
import { storePurchaseDocument, storePurchaseResource, storeRefundResource } from '../../resources/store.js';
import { studioCall } from './studio-call.js';

/**
 * Store purchases and refunds (docs/store.md): the player's verification of a purchase (player
 * scope), the stores' own notifications (public: Apple and Google send no apikey; the path names
 * the app and the store service verifies the signature or token), and the studio's credentials
 * and reads (studio scope).
 */

const RECEIPT_HELP = 'platform "apple" with signed_transaction, or platform "google" with product_id and purchase_token';

export const StorePurchaseBody = z.object({
  data: z.object({
    type: z.literal('store_purchase', { error: 'data.type must be "store_purchase".' }),
    attributes: z.discriminatedUnion(
      'platform',
      [
        z
          .object({
            platform: z.literal('apple'),
            signed_transaction: z
              .string({ error: 'signed_transaction is required: the App Store JWS of the transaction (Transaction.jwsRepresentation).' })
              .min(1, { error: 'signed_transaction must not be empty.' })
              .max(SIGNED_TRANSACTION_MAX, { error: `signed_transaction is at most ${SIGNED_TRANSACTION_MAX} characters.` })
              .describe("StoreKit's Transaction.jwsRepresentation (the App Store Server API's signedTransactionInfo)."),
          })
          .strict(),
        z
          .object({
            platform: z.literal('google'),
            product_id: z
              .string({ error: 'product_id is required: the Google Play product id bought.' })
              .min(1, { error: 'product_id must not be empty.' })
              .max(150, { error: 'product_id is at most 150 characters.' })
              .describe('The Google Play product id bought.'),
            purchase_token: z
              .string({ error: 'purchase_token is required: the purchase token Play Billing gave the app.' })
              .min(1, { error: 'purchase_token must not be empty.' })
              .max(PURCHASE_TOKEN_MAX, { error: `purchase_token is at most ${PURCHASE_TOKEN_MAX} characters.` })
              .describe("Play Billing's purchase token."),
          })
          .strict(),
      ],
      { error: `attributes must be ${RECEIPT_HELP}.` },
    ),
  }),
});

/** POST /api/v1/players/me/store/purchases. */
async function verifyPurchase(request: FastifyRequest, reply: FastifyReply) {
  jsonApiQuery(request, NO_QUERY);
  const a = parseBody(StorePurchaseBody, request.body).data.attributes;
  const req =
    a.platform === 'apple'
      ? { platform: 'apple' as const, signedTransaction: a.signed_transaction }
      : { platform: 'google' as const, productId: a.product_id, purchaseToken: a.purchase_token };
  const r = await request.server.bus.request(VerifyStorePurchase, req, callContext(request), {
    timeoutMs: request.server.gatewayConfig.STORE_TIMEOUT_MS,
  });
  reply.header('cache-control', 'no-store');
  return sendDocument(reply, r.replayed ? 200 : 201, storePurchaseDocument(r));
}

/** The store player route (player scope). */
export async function storePurchaseRoutes(app: FastifyInstance) {
  app.post(
    '/api/v1/players/me/store/purchases',
    {
      config: {
        bodyType: 'jsonapi',
        openapi: documented(docs.verifyStorePurchase, { query: NO_QUERY, body: { schema: StorePurchaseBody, required: true } }),
      },
    },
    verifyPurchase,
  );
}

/** A JWS in compact serialisation: three base64url parts (the signature may be empty; the store service judges it). */
const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

export const AppleNotificationBody = z.object({
  signedPayload: z
    .string({ error: 'signedPayload is required: the JWS App Store Server Notifications V2 send.' })
    .min(1, { error: 'signedPayload must not be empty.' })
    .max(60 * 1024, { error: 'signedPayload is too long.' })
    .regex(COMPACT_JWS, { error: 'signedPayload must be a compact JWS (three base64url parts separated by dots).' })
    .describe("Apple's signed notification (responseBodyV2 signedPayload): a JWS of the responseBodyV2DecodedPayload."),
});

/**
 * A Pub/Sub push (the push subscription's JSON body): its message carries the real-time developer
 * notification as base64 `data`. Only the members read are passed on (Pub/Sub's snake_case
 * duplicates `message_id`, `publish_time` and anything else are dropped), so nothing of unbounded
 * shape reaches the store service. A developer notification is a few hundred bytes: `data` is
 * bounded well below the body's limit.
 */
export const GooglePushBody = z.object({
  message: z.object({
    data: z
      .string({ error: 'message.data is required: the base64 of the developer notification.' })
      .max(16 * 1024, { error: 'message.data is at most 16384 characters.' })
      .describe('The developer notification (JSON), base64.'),
    messageId: z
      .string({ error: 'message.messageId is required.' })
      .min(1, { error: 'message.messageId must not be empty.' })
      .max(256, { error: 'message.messageId is at most 256 characters.' })
      .describe("Pub/Sub's id of the message."),
    publishTime: z.string().max(64, { error: 'message.publishTime is at most 64 characters.' }).optional(),
    attributes: z.record(z.string(), z.string().max(1024, { error: 'message.attributes values are at most 1024 characters.' })).optional(),
  }),
  subscription: z
    .string({ error: 'subscription is required: the push subscription (projects/…/subscriptions/…).' })
    .min(1, { error: 'subscription must not be empty.' })
    .max(512, { error: 'subscription is at most 512 characters.' }),
});

const keyFileMember = (name: string, description: string) =>
  z
    .string({ error: `${name} must be a string.` })
    .max(16 * 1024, { error: `${name} is at most 16384 characters.` })
    .optional()
    .describe(description);

/**
 * A service-account key file as Google issues it. The members the store service uses are passed
 * on (it checks them, 422 `google_credentials_invalid` naming each problem); the file's other
 * members (client_id, auth_uri…) are not needed and are dropped.
 */
const KeyFileBody = z.object({
  type: keyFileMember('type', '"service_account".'),
  project_id: keyFileMember('project_id', 'The Google Cloud project.'),
  private_key_id: keyFileMember('private_key_id', "The key's id."),
  private_key: keyFileMember('private_key', 'The RSA private key, PEM (PKCS #8).'),
  client_email: keyFileMember('client_email', "The service account's email (the only part ever shown again)."),
});

/** The stores' notifications (public: the store service verifies Apple's signature and Google's token). */
export async function storeNotificationRoutes(app: FastifyInstance) {
  app.post(
    '/api/v1/stores/apple/notifications/:app_id',
    {
      config: {
        bodyType: 'json',
        openapi: documented(docs.appleStoreNotification, { query: NO_QUERY, body: { schema: AppleNotificationBody, required: true } }),
      },
    },
    async (request, reply) => {
      const appId = uuidParam(request, 'app_id');
      jsonApiQuery(request, NO_QUERY);
      const { signedPayload } = parseBody(AppleNotificationBody, request.body);
      const r = await request.server.bus.request(AppleStoreNotification, { appId, signedPayload }, { requestId: request.id, appId });
      return reply
        .code(200)
        .type(JSONAPI_MEDIA_TYPE)
        .send({ meta: { outcome: r.outcome } });
    },
  );
  app.post(
    '/api/v1/stores/google/notifications/:app_id',
    {
      config: {
        bodyType: 'json',
        openapi: documented(docs.googleStoreNotification, {
          query: NO_QUERY,
          body: { schema: GooglePushBody, required: true },
        }),
      },
    },
    async (request, reply) => {
      const appId = uuidParam(request, 'app_id');
      jsonApiQuery(request, NO_QUERY);
      const authorization = request.headers.authorization;
      const body = parseBody(GooglePushBody, request.body);
      const r = await request.server.bus.request(
        GoogleStoreNotification,
        { appId, body, ...(authorization ? { authorization } : {}) },
        { requestId: request.id, appId },
      );
      return reply
        .code(200)
        .type(JSONAPI_MEDIA_TYPE)
        .send({ meta: { outcome: r.outcome } });
    },
  );
}

/** PUT /api/v1/admin/store/google-credentials: the key file, stored sealed; never shown again. */
async function setGoogleCredentials(request: FastifyRequest, reply: FastifyReply) {
  jsonApiQuery(request, NO_QUERY);
  const key = parseBody(KeyFileBody, request.body);
  await request.server.bus.request(AdminSetGoogleCredentials, { appId: request.tenant!.appId, key }, studioCall(request));
  return reply.code(204).header('cache-control', 'no-store').send();
}

/** GET /api/v1/admin/players/{id}/store: a player's purchases, and their refunds as included resources. */
async function playerStore(request: FastifyRequest, reply: FastifyReply) {
  jsonApiQuery(request, NO_QUERY);
  const playerId = uuidParam(request, 'id');
  const appId = request.tenant!.appId;
  const ctx = studioCall(request);
  await request.server.bus.request(AdminFindPlayer, { appId, playerId }, ctx);
  const r = await request.server.bus.request(AdminPlayerStore, { appId, playerId, limit: 50 }, ctx);
  reply.header('cache-control', 'no-store');
  return sendDocument(reply, 200, {
    data: r.purchases.map(storePurchaseResource),
    included: r.refunds.map(storeRefundResource),
    meta: { player_id: playerId, purchases: r.purchases.length, refunds: r.refunds.length },
  });
}

/** GET /api/v1/admin/store/products: each product's sales and refund rate, and whose Google credentials are set. */
async function storeProducts(request: FastifyRequest, reply: FastifyReply) {
  jsonApiQuery(request, NO_QUERY);
  const appId = request.tenant!.appId;
  const ctx = studioCall(request);
  const [r, credentials] = await Promise.all([
    request.server.bus.request(AdminStoreProducts, { appId }, ctx),
    request.server.bus.request(AdminGoogleCredentials, { appId }, ctx),
  ]);
  reply.header('cache-control', 'no-store');
  return sendDocument(reply, 200, {
    data: r.products.map((p) => ({
      type: 'store_product' as const,
      id: p.id,
      attributes: {
        name: p.name,
        apple_product_id: p.appleProductId,
        google_product_id: p.googleProductId,
        purchases: p.purchases,
        refunded: p.refunded,
        refund_rate: p.refundRate,
        revenue: p.revenue,
      },
      relationships: {},
    })),
    meta: { google_client_email: credentials.clientEmail },
  });
}

/** The studio's store routes (studio scope, so every call is in the audit log). */
export async function studioStoreRoutes(app: FastifyInstance) {
  const keyFile = { schema: KeyFileBody, required: true };
  app.put(
    '/api/v1/admin/store/google-credentials',
    { config: { bodyType: 'json', openapi: documented(docs.adminSetGoogleCredentials, { query: NO_QUERY, body: keyFile }) } },
    setGoogleCredentials,
  );
  app.get('/api/v1/admin/players/:id/store', { config: { openapi: documented(docs.adminPlayerStore, { query: NO_QUERY }) } }, playerStore);
  app.get('/api/v1/admin/store/products', { config: { openapi: documented(docs.adminStoreProducts, { query: NO_QUERY }) } }, storeProducts);
}
