import { createHash } from 'node:crypto';
import {
  ChestGrant,
  domainEventId,
  DomainEventPublished,
  enqueue,
  WalletCreditGrant,
  withTransaction,
  type CallContext,
  type OutboxMessage,
  type Pool,
  type Queryable,
} from '@ccs/shared';
import { recordCompletions, type Completion } from '../repositories/completions-repo.js';

// Fixed namespace of completion reward ids (a random v4 chosen once for this project).
const NAMESPACE = Buffer.from('7d41c2e08b5f4a93a6e1c0f2b39d8e57', 'hex');

/**
 * A name-based UUID (RFC 4122 version 5 layout) of `name`: a completion always gives the same
 * message ids and inventory chest ids, whoever records it.
 */
export function completionUuid(name: string): string {
  const hash = createHash('sha1').update(NAMESPACE).update(name).digest();
  hash[6] = (hash[6]! & 0x0f) | 0x50;
  hash[8] = (hash[8]! & 0x3f) | 0x80;
  const hex = hash.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** The wallet ledger reference of a completion's credits (one ledger row per currency). */
export const completionReference = (playerId: string, collectionId: string): string => `completion:${playerId.toLowerCase()}:${collectionId}`;

/** A player a batch of grants gave items to, and the collections of those items. */
export interface Touched {
  appId: string;
  playerId: string;
  collectionIds: Set<string>;
  ctx: CallContext;
}

/**
 * Writes a completion's reward to the outbox (in the completion's transaction): one
 * WalletCreditGrant (reason `collection_reward`, each currency its own credit referenced by the
 * completion) and one ChestGrant per chest, whose inventory chest id is derived from the
 * completion (source `earned`; a full inventory sends it to the mailbox). Returns the messages.
 */
async function enqueueReward(tx: Queryable, t: Touched, c: Completion): Promise<OutboxMessage[]> {
  const out: OutboxMessage[] = [];
  const name = `completion:${t.appId.toLowerCase()}:${t.playerId.toLowerCase()}:${c.collectionId}`;
  const credits = Object.entries(c.reward?.currencies ?? {}).map(([currency, amount]) => ({
    currency,
    amount: String(amount),
    reference: completionReference(t.playerId, c.collectionId),
  }));
  if (credits.length) {
    const payload = { appId: t.appId, playerId: t.playerId, reason: 'collection_reward' as const, credits };
    out.push(await enqueue(tx, WalletCreditGrant, completionUuid(`${name}:credit`), payload, t.ctx));
  }
  for (const [i, chestTypeId] of (c.reward?.chests ?? []).entries()) {
    const inventoryChestId = completionUuid(`${name}:chest:${i}`);
    const payload = { appId: t.appId, playerId: t.playerId, inventoryChestId, chestTypeId, source: 'earned' as const };
    out.push(await enqueue(tx, ChestGrant, completionUuid(`${name}:chest-grant:${i}`), payload, t.ctx));
  }
  return out;
}

/** `collection.completed` (docs/webhooks.md), with the completion row: one event per player and collection. */
function enqueueCompleted(tx: Queryable, t: Touched, c: Completion): Promise<OutboxMessage> {
  const eventId = domainEventId('collection.completed', `${t.appId}:${t.playerId}:${c.collectionId}`);
  const at = c.completedAt.toISOString();
  const data = { player_id: t.playerId, collection_id: c.collectionId, completed_at: at, reward: c.reward ?? null };
  const payload = { eventId, type: 'collection.completed' as const, appId: t.appId, playerId: t.playerId, occurredAt: at, data };
  return enqueue(tx, DomainEventPublished, eventId, payload, { ...t.ctx, playerId: t.playerId });
}

/**
 * The completion step of applying opening grants (docs/content.md, "Collection rewards"), run
 * after the grants committed: for each player a batch touched, in one transaction, the
 * collections of the granted items that the player now completes are recorded and their rewards
 * written to the outbox. Exactly once: the completion row's key admits one insert, and the
 * rewards are written with it. No completion is missed: of two batches that complete a
 * collection together, the later check runs after both committed and sees every item; a batch
 * re-delivered after a crash checks again. Returns the messages to publish now (the relay
 * publishes them otherwise).
 */
export async function settleCompletions(pool: Pool, touched: Touched[]): Promise<{ messages: OutboxMessage[]; completions: number }> {
  if (!touched.length) return { messages: [], completions: 0 };
  return withTransaction(pool, (tx) => settleCompletionsIn(tx, touched));
}

/**
 * The completion step inside the caller's transaction (a trade's, which moves the copies and
 * records what they complete at once): the same rows and messages as settleCompletions. The
 * caller passes `touched` in (app, player) order (touchedBy's), for the same reason.
 */
export async function settleCompletionsIn(tx: Queryable, touched: Touched[]): Promise<{ messages: OutboxMessage[]; completions: number }> {
  const messages: OutboxMessage[] = [];
  let completions = 0;
  for (const t of touched) {
    for (const c of await recordCompletions(tx, t.appId, t.playerId, [...t.collectionIds])) {
      completions += 1;
      messages.push(await enqueueCompleted(tx, t, c));
      if (c.reward) messages.push(...(await enqueueReward(tx, t, c)));
    }
  }
  return { messages, completions };
}

/**
 * The players and collections a batch of grants touched (those `check` keeps: the completion
 * candidates), once each, in (app, player) order: two
 * batches that complete collections of the same players insert their completion rows in one
 * order, so neither waits on a row the other holds while holding one it needs (no deadlock).
 */
export function touchedBy(
  grants: { payload: { openingId: string; appId: string; playerId: string; items: { collectionId: string }[] }; ctx: CallContext }[],
  check: (openingId: string, appId: string, playerId: string, collectionId: string) => boolean = () => true,
): Touched[] {
  const byPlayer = new Map<string, Touched>();
  for (const g of grants) {
    const { openingId, appId, playerId } = g.payload;
    const key = `${appId.toLowerCase()}:${playerId.toLowerCase()}`;
    const t = byPlayer.get(key) ?? { appId, playerId, collectionIds: new Set<string>(), ctx: g.ctx };
    for (const it of g.payload.items) if (check(openingId, appId, playerId, it.collectionId)) t.collectionIds.add(it.collectionId);
    if (t.collectionIds.size) byPlayer.set(key, t);
  }
  return [...byPlayer.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, t]) => t);
}
