import { createHash } from 'node:crypto';
import { outboxMessage, WalletCreditGrant, type CallContext, type ConvertedSlot, type OutboxMessage } from '@ccs/shared';

// Fixed namespace of conversion credit message ids (a random v4 chosen once for this project).
const NAMESPACE = Buffer.from('2b8f5c1e9a4d4e7b8c3a1f6e5d7b9c20', 'hex');

/**
 * The message id of an opening's conversion credit: a name-based UUID (RFC 4122 version 5) of the
 * opening, so the same opening can only ever produce the same credit message (JetStream and the
 * wallet recognise it), whoever applied the grant.
 */
export function conversionCreditId(openingId: string): string {
  const hash = createHash('sha1').update(NAMESPACE).update(`duplicate-conversion:${openingId.toLowerCase()}`).digest();
  hash[6] = (hash[6]! & 0x0f) | 0x50;
  hash[8] = (hash[8]! & 0x3f) | 0x80;
  const hex = hash.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** The wallet ledger reference of one converted item: its opening and slot. */
export const conversionReference = (openingId: string, slot: number): string => `opening:${openingId.toLowerCase()}:slot:${slot}`;

/**
 * The durable credit of an opening's conversions: one WalletCreditGrant whose every converted
 * item with an amount is its own credit, referenced by opening and slot, so the wallet writes one
 * ledger row per converted item, once. None when nothing converted is worth anything.
 */
export function conversionCredit(
  grant: { openingId: string; appId: string; playerId: string },
  converted: ConvertedSlot[],
  ctx: CallContext,
): OutboxMessage | undefined {
  const credits = converted
    .filter((c) => c.amount > 0)
    .map((c) => ({ currency: c.currency, amount: String(c.amount), reference: conversionReference(grant.openingId, c.slot) }));
  if (credits.length === 0) return undefined;
  return outboxMessage(
    WalletCreditGrant,
    conversionCreditId(grant.openingId),
    { appId: grant.appId, playerId: grant.playerId, reason: 'duplicate_conversion', credits },
    ctx,
  );
}
