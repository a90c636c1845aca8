import { randomUUID } from 'node:crypto';
import { headers as natsHeaders } from 'nats';
import { AppliedNotices, DURABLE, encodeJson, NOTIFY_HEADER, prefixed, StoreRefundApplied } from '@ccs/shared';
import type { z } from 'zod';
import type { TestStack } from './stack.js';

export type StoreRefund = z.infer<typeof StoreRefundApplied.payload>;

/** A store refund of `currencies` (code → amount) taken from a player, as the store publishes it. */
export function storeRefund(appId: string, playerId: string, currencies: Record<string, string>, overrides: Partial<StoreRefund> = {}): StoreRefund {
  return {
    refundId: randomUUID(),
    appId,
    playerId,
    purchaseId: randomUUID(),
    kind: 'refund',
    policy: 'debt',
    currencies: Object.entries(currencies).map(([currency, amount]) => ({ currency, amount })),
    chestIds: [],
    ...overrides,
  };
}

/**
 * Puts a store refund on the grants stream as the store's outbox relay does (Nats-Msg-Id = the
 * refund id unless `msgId` says otherwise), asking for the applied notices, and waits (bounded)
 * until the wallet's store-refund consumer applied it. Returns whether the stream took it as a
 * new message and whether the wallet's notice came in time.
 */
export async function publishStoreRefund(
  stack: TestStack,
  refund: StoreRefund,
  opts: { msgId?: string; waitMs?: number } = {},
): Promise<{ duplicate: boolean; applied: boolean }> {
  const prefix = stack.env.NATS_PREFIX!;
  const notices = new AppliedNotices(stack.nc, prefix);
  try {
    const msgId = opts.msgId ?? refund.refundId;
    const waiting = notices.expect(DURABLE.walletStoreRefunds, [msgId]);
    const h = natsHeaders();
    h.set('ccs-request-id', randomUUID());
    h.set('ccs-app-id', refund.appId);
    h.set('ccs-player-id', refund.playerId);
    h.set(NOTIFY_HEADER, notices.subject);
    const ack = await stack.nc
      .jetstream()
      .publish(prefixed(prefix, StoreRefundApplied.subject), encodeJson(StoreRefundApplied.payload.parse(refund)), { msgID: msgId, headers: h });
    if (ack.duplicate) return { duplicate: true, applied: false };
    const seen = await waiting.done(opts.waitMs ?? 15_000);
    return { duplicate: false, applied: seen.has(msgId) };
  } finally {
    notices.close();
  }
}
