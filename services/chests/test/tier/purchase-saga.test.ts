import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AppContentLoaded,
  AppError,
  compensateStep,
  DebitCurrency,
  endpoint,
  GetComplianceProfile,
  GetInventory,
  ListChestTypes,
  PurchaseChests,
  readContentFile,
  RefundDebit,
  runStep,
  type CallContext,
  chestTypeId,
} from '@ccs/shared';
import { startServiceTier, type ServiceTier } from '@ccs/shared/testing';
import { ChestsConfigSchema, type ChestsConfig } from '../../src/config.js';
import { debitWallet } from '../../src/payments/steps/debit-wallet.js';
import { chestsService } from '../../src/service.js';

/**
 * The service tier: the chests service alone, against real Postgres and NATS, with the wallet and
 * players answered by stand-ins bound to their contracts. It proves the purchase saga's side of
 * each contract: what chests asks the wallet (debit, then refund on failure), what it does with
 * each answer, and that a wallet that does not answer leads to a refund, not a lost payment.
 */
const content = readContentFile();
const wooden = content.chests.find((c) => c.id === 'wooden-chest')!;

describe('chests, service tier: the purchase saga against a stand-in wallet', () => {
  let tier: ServiceTier<ChestsConfig>;
  const appId = randomUUID();
  const balances = new Map<string, number>();
  /** Players whose wallet never answers a debit (as if the wallet were down mid-purchase). */
  const unanswered = new Set<string>();
  const refunded: string[] = [];

  const wallet = [
    endpoint(DebitCurrency, async (req) => {
      if (unanswered.has(req.playerId)) return new Promise<never>(() => undefined);
      const left = (balances.get(req.playerId) ?? 0) - Number(req.amount);
      if (left < 0) throw AppError.conflict('insufficient_funds', `The balance of ${req.currency} is too low for this debit.`);
      balances.set(req.playerId, left);
      return { currencyId: randomUUID(), currency: req.currency, balance: left.toFixed(2) };
    }),
    endpoint(RefundDebit, async (req) => {
      refunded.push(req.reference);
      return { outcome: 'unknown_reference' as const };
    }),
    endpoint(GetComplianceProfile, async () => ({ country: 'DE', birthYear: 1990 })),
  ];
  const ctxOf = (playerId: string): CallContext => ({ requestId: randomUUID(), appId, playerId });
  const buy = (playerId: string, quantity: number) =>
    tier.bus.request(PurchaseChests, { chestTypeId: chestTypeId(appId, wooden.id), currency: 'coins', quantity }, ctxOf(playerId));
  const inventory = async (playerId: string) =>
    (await tier.bus.request(GetInventory, { ownerId: playerId, page: { limit: 100, offset: 0 }, order: 'asc' }, ctxOf(playerId))).totalChests;

  beforeAll(async () => {
    tier = await startServiceTier(chestsService, (env) => ChestsConfigSchema.parse(env), {
      responders: wallet,
      env: { NATS_REQUEST_TIMEOUT_MS: '1000', PURCHASE_STALE_MS: '60000' },
    });
    // The app's content, as the players service's outbox would deliver it.
    await tier.publish(AppContentLoaded, AppContentLoaded.payload.parse({ appId, version: 1, content }));
    for (let i = 0; ; i++) {
      const listed = await tier.bus
        .request(ListChestTypes, { sort: [], page: { limit: 100, offset: 0 } }, { requestId: 'c', appId })
        .catch(() => undefined);
      if (listed?.total) break;
      if (i > 100) throw new Error('the content never arrived');
      await new Promise((r) => setTimeout(r, 100));
    }
  });
  afterAll(async () => tier?.close());

  it('debits the price once, under the purchase id, then adds the chests', async () => {
    const player = randomUUID();
    balances.set(player, 5000);
    const r = await buy(player, 2);
    expect([r.amount, r.chests.length]).toEqual([String(wooden.price.coins! * 2), 2]);
    const debits = tier.calls.filter((c) => c.subject === DebitCurrency.subject && c.playerId === player);
    expect(debits.map((d) => d.payload)).toEqual([
      { playerId: player, currency: 'coins', amount: String(wooden.price.coins! * 2), reference: r.purchaseId },
    ]);
    expect(balances.get(player)).toBe(5000 - wooden.price.coins! * 2);
    expect(await inventory(player)).toBe(2);
  });

  it("answers the wallet's 409 insufficient_funds as it is, and adds nothing", async () => {
    const player = randomUUID();
    balances.set(player, wooden.price.coins! - 1);
    await expect(buy(player, 1)).rejects.toMatchObject({ errors: [{ kind: 'conflict', code: 'insufficient_funds' }] });
    expect(await inventory(player)).toBe(0);
  });

  it('refunds (compensation) when the wallet does not answer, and answers 503 purchase_interrupted', async () => {
    const player = randomUUID();
    unanswered.add(player);
    await expect(buy(player, 1)).rejects.toMatchObject({ errors: [{ kind: 'unavailable', code: 'purchase_interrupted' }] });
    const debit = tier.calls.find((c) => c.subject === DebitCurrency.subject && c.playerId === player);
    const purchaseId = (debit?.payload as { reference: string }).reference;
    expect(refunded).toContain(purchaseId);
    expect(await inventory(player)).toBe(0);
  });

  it('runs the debit-wallet step: a refusal fails permanent, silence retryable; its compensation needs only the reference', async () => {
    const [poor, silent, rich] = [randomUUID(), randomUUID(), randomUUID()];
    balances.set(poor, 1);
    balances.set(rich, 100);
    unanswered.add(silent);
    const step = debitWallet(tier.bus);
    const debit = (playerId: string) =>
      runStep(step, { playerId, currency: 'coins', amount: '10', reference: `key:${randomUUID()}` }, ctxOf(playerId));
    expect(await debit(poor)).toMatchObject({ ok: false, kind: 'permanent', error: { errors: [{ code: 'insufficient_funds' }] } });
    expect(await debit(silent)).toMatchObject({ ok: false, kind: 'retryable', error: { errors: [{ kind: 'timeout' }] } });
    expect(await debit(rich)).toMatchObject({ ok: true, value: { currency: 'coins', balance: '90.00' } });
    const reference = `unlock:${randomUUID()}`;
    // The stand-in wallet knows no reference: the compensation of a debit that never happened voids it.
    expect(await compensateStep(step, { reference }, ctxOf(rich))).toBe('nothing_debited');
    expect(refunded).toContain(reference);
  });
});
