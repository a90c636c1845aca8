import type { TradeState, TradeView } from '@ccs/shared';
import type { TradeRecord } from '../repositories/trades-repo.js';

/** The state a trade shows: an offer mid-step (being offered or accepted) is `offered`. */
export function shownState(t: Pick<TradeRecord, 'state'>): TradeState {
  return t.state === 'offering' || t.state === 'accepting' || t.state === 'failed' ? 'offered' : t.state;
}

/** A trade as its players see it. */
export function tradeView(t: TradeRecord): TradeView {
  return {
    id: t.id,
    state: shownState(t),
    offererId: t.offererId,
    partnerId: t.partnerId,
    give: { collectibleId: t.giveId, rarity: t.giveRarity },
    want: { collectibleId: t.wantId, rarity: t.wantRarity },
    tokens: { currency: t.tokenCurrency, offer: t.giveCost, accept: t.wantCost },
    createdAt: t.createdAt.toISOString(),
    expiresAt: t.expiresAt.toISOString(),
    endedAt: t.endedAt ? t.endedAt.toISOString() : null,
  };
}
