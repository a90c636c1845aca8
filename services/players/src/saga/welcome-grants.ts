import { randomUUID } from 'node:crypto';
import {
  ChestGrant,
  domainEventId,
  DomainEventPublished,
  insertOutboxMessages,
  outboxMessage,
  WalletCreditGrant,
  type CallContext,
  type OutboxMessage,
  type Queryable,
} from '@ccs/shared';
import type { z } from 'zod';
import type { PlayerRules } from '../repositories/apps-repo.js';

/** When grants are made: a new registered player, a new guest, or a guest becoming registered. */
export type GrantOccasion = 'registration' | 'guest' | 'upgrade';

type WalletGrant = z.infer<typeof WalletCreditGrant.payload>;
type ChestGrantPayload = z.infer<typeof ChestGrant.payload>;

/** The durable messages of one occasion, with the ids chosen up front (the saga's idempotency keys). */
export interface WelcomeGrantPlan {
  wallet: { id: string; payload: WalletGrant }[];
  chest?: { id: string; payload: ChestGrantPayload };
  /** The `player.registered` webhook event (docs/webhooks.md): a new player, a new guest, or a guest registering. */
  registered: { appId: string; playerId: string; occasion: GrantOccasion; email: string | null };
}

function walletGrant(appId: string, playerId: string, reason: 'initial_currency' | 'welcome_bonus', amounts: Record<string, number>) {
  const credits = Object.entries(amounts)
    .filter(([, n]) => n > 0)
    .map(([currency, n]) => ({ currency, amount: String(n) }));
  return credits.length ? [{ id: randomUUID(), payload: { appId, playerId, reason, credits } }] : [];
}

/**
 * What each occasion grants. A guest gets the initial currency and the starter chest; upgrading it
 * adds only the welcome bonus, so nothing is granted twice; a direct registration gets all three.
 */
export function planWelcomeGrants(
  occasion: GrantOccasion,
  rules: PlayerRules,
  p: { appId: string; playerId: string; starterChestId: string; email?: string | null },
): WelcomeGrantPlan {
  const initial = occasion === 'upgrade' ? [] : walletGrant(p.appId, p.playerId, 'initial_currency', rules.initial_currency);
  const welcome = occasion === 'guest' ? [] : walletGrant(p.appId, p.playerId, 'welcome_bonus', rules.welcome_bonus);
  const chest =
    occasion === 'upgrade'
      ? undefined
      : {
          id: randomUUID(),
          payload: {
            appId: p.appId,
            playerId: p.playerId,
            inventoryChestId: p.starterChestId,
            chestTypeId: rules.starter_chest_type,
            source: 'welcome' as const,
          },
        };
  return { wallet: [...initial, ...welcome], chest, registered: { appId: p.appId, playerId: p.playerId, occasion, email: p.email ?? null } };
}

/**
 * Writes the plan's messages to the outbox in the caller's transaction, in one statement, and
 * returns them (to be published after the commit); the wallet announces its grants, and chests
 * the starter chest's, on `notify` once applied.
 */
export async function enqueueWelcomeGrants(tx: Queryable, plan: WelcomeGrantPlan, ctx: CallContext, notify?: string): Promise<OutboxMessage[]> {
  const messages: OutboxMessage[] = [];
  for (const m of plan.wallet) messages.push(outboxMessage(WalletCreditGrant, m.id, m.payload, { ...ctx, playerId: m.payload.playerId }, { notify }));
  if (plan.chest)
    messages.push(outboxMessage(ChestGrant, plan.chest.id, plan.chest.payload, { ...ctx, playerId: plan.chest.payload.playerId }, { notify }));
  messages.push(registeredMessage(plan.registered, ctx));
  await insertOutboxMessages(tx, messages);
  return messages;
}

/**
 * `player.registered`, in the registration's transaction: one event per player for its creation
 * (registered or guest), and one more when a guest registers (its own id: a later fact).
 */
function registeredMessage(r: WelcomeGrantPlan['registered'], ctx: CallContext): OutboxMessage {
  const eventId = domainEventId('player.registered', r.occasion === 'upgrade' ? `upgrade:${r.playerId}` : r.playerId);
  const at = new Date().toISOString();
  const data = { player_id: r.playerId, email: r.email, is_anonymous: r.occasion === 'guest', registered_at: at };
  const payload = { eventId, type: 'player.registered' as const, appId: r.appId, playerId: r.playerId, occurredAt: at, data };
  return outboxMessage(DomainEventPublished, eventId, payload, { ...ctx, playerId: r.playerId });
}
