import { randomUUID } from 'node:crypto';
import {
  ChestGrant,
  domainEventId,
  DomainEventPublished,
  DURABLE,
  outboxMessage,
  WalletCreditGrant,
  withTransaction,
  type CallContext,
  type OutboxMessage,
  type ReplyOf,
  type VerifyStorePurchase,
} from '@ccs/shared';
import type { StoreDeps } from '../deps.js';
import { storeErrors } from '../errors.js';
import { claimPurchase, findPurchase, type NewPurchase } from '../repositories/purchases-repo.js';
import type { ClaimGuard } from './money-limits.js';
import { eventAmounts, grantsOf } from './products.js';
import type { VerifiedTransaction } from './verified.js';
import { purchaseView } from './view.js';

type Reply = ReplyOf<typeof VerifyStorePurchase>;

/**
 * The durable messages a purchase writes with its claim: the wallet's credits, one grant per
 * chest, and its webhook event (none when no endpoint of the app takes `store.purchase_verified`).
 */
interface PurchaseMessages {
  wallet: OutboxMessage[];
  chests: OutboxMessage[];
  events: OutboxMessage[];
}

function messagesOf(p: NewPurchase, ctx: CallContext, notify: string, withEvent: boolean): PurchaseMessages {
  const who = { ...ctx, appId: p.appId, playerId: p.playerId };
  const wallet = p.granted.currencies.length
    ? [
        outboxMessage(
          WalletCreditGrant,
          randomUUID(),
          {
            appId: p.appId,
            playerId: p.playerId,
            reason: 'store_purchase',
            credits: p.granted.currencies.map((c) => ({ ...c, reference: `store:${p.id}:${c.currency}` })),
          },
          who,
          { notify },
        ),
      ]
    : [];
  const chests = p.granted.chests.map((c) =>
    outboxMessage(
      ChestGrant,
      c.id,
      { appId: p.appId, playerId: p.playerId, inventoryChestId: c.id, chestTypeId: c.chestTypeId, source: 'purchased' },
      who,
      {
        notify,
      },
    ),
  );
  const eventId = domainEventId('store.purchase_verified', p.id);
  const event = outboxMessage(
    DomainEventPublished,
    eventId,
    {
      eventId,
      type: 'store.purchase_verified',
      appId: p.appId,
      playerId: p.playerId,
      occurredAt: new Date().toISOString(),
      data: {
        player_id: p.playerId,
        purchase_id: p.id,
        platform: p.platform,
        transaction_id: p.transactionId,
        product_id: p.productId,
        quantity: p.quantity,
        price: p.price,
        grants: { currencies: eventAmounts(p.granted.currencies), chests: p.granted.chests.map((c) => ({ id: c.id, chest_type_id: c.chestTypeId })) },
        verified_at: new Date().toISOString(),
      },
    },
    who,
  );
  return { wallet, chests, events: withEvent ? [event] : [] };
}

/**
 * Grants a verified transaction to the calling player, exactly once across replicas, retries and
 * racing submissions: the claim of the transaction (unique across every app) and the durable
 * messages of what it grants commit in one transaction, so either both happened or neither did.
 * Then the messages go out at once and the answer waits (bounded by GRANT_WAIT_MS) until the
 * wallet and chests applied them, so the balances and inventory read next include them. A
 * transaction already claimed answers the first grant again to the same player (`replayed`), 409
 * `transaction_claimed` to anyone else, and 422 `receipt_revoked` when a refund came first. `guard`
 * (the spend limits in money, money-limits.ts) runs first in the claim's transaction and may refuse it.
 */
export async function grantVerified(
  deps: StoreDeps,
  appId: string,
  playerId: string,
  v: VerifiedTransaction,
  ctx: CallContext,
  guard?: ClaimGuard,
): Promise<Reply> {
  const purchase: NewPurchase = {
    id: randomUUID(),
    appId,
    playerId,
    platform: v.platform,
    transactionId: v.transactionId,
    productId: v.product.id,
    storeProductId: v.storeProductId,
    environment: v.environment,
    quantity: v.quantity,
    price: v.price,
    purchasedAt: v.purchasedAt,
    purchaseToken: v.purchaseToken,
    granted: grantsOf(appId, v.product, v.quantity),
  };
  const withEvent = await deps.interest.wants(appId, 'store.purchase_verified', ctx.requestId);
  const messages = messagesOf(purchase, ctx, deps.notices.subject, withEvent);
  const written = [...messages.wallet, ...messages.chests, ...messages.events];
  // The claim and its messages are one statement; a guard (the money limits) makes it a transaction with its checks.
  const claimed = guard
    ? await withTransaction(deps.pool, async (tx) => {
        await guard(tx);
        return claimPurchase(tx, purchase, written);
      })
    : await claimPurchase(deps.pool, purchase, written);
  if (!claimed) return answerClaimed(deps, appId, playerId, v);
  const balances = await publishAndAwaitGrants(deps, messages);
  return { purchase: purchaseView(claimed), ...(balances ? { balances } : {}), replayed: false };
}

/** The answer for a transaction another claim holds: the first grant again to its player, else a refusal. */
async function answerClaimed(deps: StoreDeps, appId: string, playerId: string, v: VerifiedTransaction): Promise<Reply> {
  const first = await findPurchase(deps.pool, v.platform, v.transactionId);
  if (!first) throw storeErrors.transactionClaimed();
  if (first.state === 'refunded_unclaimed') throw storeErrors.receiptRevoked(v.platform);
  if (first.appId !== appId || first.playerId !== playerId) throw storeErrors.transactionClaimed();
  return { purchase: purchaseView(first), replayed: true };
}

/**
 * Publishes a purchase's messages now and waits, bounded, until the wallet applied its credits and
 * chests its chests (both waits registered before the publish, so no notice is missed). Resolves
 * the balances after the credits, as the wallet's applied notices tell them, once everything was
 * applied in time; else undefined, and the answer goes out anyway: the grants are durable and
 * land when the services get to them.
 */
async function publishAndAwaitGrants(deps: StoreDeps, m: PurchaseMessages): Promise<{ currency: string; amount: string }[] | undefined> {
  const wallet = deps.notices.expect(
    DURABLE.walletCreditGrants,
    m.wallet.map((x) => x.id),
  );
  const chests = deps.notices.expect(
    DURABLE.chestsGrants,
    m.chests.map((x) => x.id),
  );
  await deps.relay
    .publishNow([...m.wallet, ...m.chests, ...m.events])
    .catch((err) => deps.log.warn({ err: String(err) }, 'purchase messages not published yet; the outbox relay will publish them'));
  const [w, c] = await Promise.all([wallet.done(deps.config.GRANT_WAIT_MS), chests.done(deps.config.GRANT_WAIT_MS)]);
  if (w.size < m.wallet.length || c.size < m.chests.length) {
    deps.log.info(
      { pendingCredits: m.wallet.length - w.size, pendingChests: m.chests.length - c.size },
      'answered before every grant was applied; they land later',
    );
    return undefined;
  }
  const balances = new Map<string, string>();
  for (const notice of w.values()) for (const [currency, amount] of Object.entries(balancesOf(notice))) balances.set(currency, amount);
  return [...balances].map(([currency, amount]) => ({ currency, amount }));
}

/** The balances a wallet credit notice carries (`{balances: {code: amount}}`; none from an older wallet). */
function balancesOf(notice: unknown): Record<string, string> {
  const b = (notice as { balances?: unknown } | undefined)?.balances;
  return b && typeof b === 'object' ? Object.fromEntries(Object.entries(b).filter((e): e is [string, string] => typeof e[1] === 'string')) : {};
}
