import { domainEventId, DomainEventPublished, enqueue, type CallContext, type OutboxMessage, type Queryable } from '@ccs/shared';
import type { TradeRecord } from '../repositories/trades-repo.js';

const sides = (t: TradeRecord) => ({
  give: { collectible_id: t.giveId, rarity: t.giveRarity },
  want: { collectible_id: t.wantId, rarity: t.wantRarity },
});

/** `trade.offered` (docs/webhooks.md), written with the offer: one event per trade. */
export function enqueueOffered(tx: Queryable, t: TradeRecord, ctx: CallContext): Promise<OutboxMessage> {
  const eventId = domainEventId('trade.offered', t.id);
  const at = t.stateAt.toISOString();
  const data = {
    trade_id: t.id,
    offerer_id: t.offererId,
    partner_id: t.partnerId,
    ...sides(t),
    tokens: { currency: t.tokenCurrency, offer: t.giveCost, accept: t.wantCost },
    expires_at: t.expiresAt.toISOString(),
    offered_at: at,
  };
  const payload = { eventId, type: 'trade.offered' as const, appId: t.appId, playerId: t.offererId, occurredAt: at, data };
  return enqueue(tx, DomainEventPublished, eventId, payload, { ...ctx, playerId: t.offererId });
}

/** `trade.completed`, written with the step that moved both copies. */
export function enqueueCompleted(tx: Queryable, t: TradeRecord, ctx: CallContext): Promise<OutboxMessage> {
  const eventId = domainEventId('trade.completed', t.id);
  const at = (t.endedAt ?? t.stateAt).toISOString();
  const data = { trade_id: t.id, offerer_id: t.offererId, partner_id: t.partnerId, ...sides(t), completed_at: at };
  const payload = { eventId, type: 'trade.completed' as const, appId: t.appId, playerId: t.partnerId, occurredAt: at, data };
  return enqueue(tx, DomainEventPublished, eventId, payload, { ...ctx, playerId: t.partnerId });
}

/** `trade.ended` with its reason, written with the step that ended the trade. */
export function enqueueEnded(tx: Queryable, t: TradeRecord, reason: 'declined' | 'cancelled' | 'expired', ctx: CallContext): Promise<OutboxMessage> {
  const eventId = domainEventId('trade.ended', t.id);
  const at = (t.endedAt ?? t.stateAt).toISOString();
  const data = { trade_id: t.id, offerer_id: t.offererId, partner_id: t.partnerId, reason, ended_at: at };
  const payload = { eventId, type: 'trade.ended' as const, appId: t.appId, playerId: t.offererId, occurredAt: at, data };
  return enqueue(tx, DomainEventPublished, eventId, payload, { ...ctx, playerId: t.offererId });
}
