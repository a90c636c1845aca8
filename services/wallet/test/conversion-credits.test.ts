import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ListCurrencies, WalletCreditGrant } from '@ccs/shared';
import { ledgerTotals, loadContent, startWalletTier, walletPool, type WalletTier } from './support/wallet-tier.js';

/**
 * Credits of converted duplicates (collections' saga step): one ledger row per converted item,
 * referenced by opening and slot, and never twice for one reference, whatever message carries it.
 */
describe('wallet: duplicate conversion credits', () => {
  let tier: WalletTier;
  const appId = randomUUID();
  let coins: string;

  beforeAll(async () => {
    tier = await startWalletTier();
    await loadContent(tier, appId, 1);
    const r = await tier.bus.request(ListCurrencies, {}, { requestId: randomUUID(), appId });
    coins = r.currencies.find((c) => c.code === 'coins')!.id;
  });
  afterAll(async () => tier?.close());

  const rowsOf = async (playerId: string) =>
    (
      await walletPool(tier).query<{ reason: string; reference: string; delta: string }>(
        'SELECT reason, reference, delta::text FROM ledger WHERE app_id = $1 AND player_id = $2 ORDER BY id',
        [appId, playerId],
      )
    ).rows;

  it('writes one ledger row per referenced credit, and nothing again for a reference already credited', async () => {
    const playerId = randomUUID();
    const opening = randomUUID();
    const credits = [
      { currency: 'coins', amount: '20', reference: `opening:${opening}:slot:1` },
      { currency: 'coins', amount: '60', reference: `opening:${opening}:slot:2` },
    ];
    const payload = { appId, playerId, reason: 'duplicate_conversion' as const, credits };
    await tier.publishApplied(WalletCreditGrant, payload, { appId });
    // The same credits under another message id (a re-publish the stream cannot recognise).
    await tier.publishApplied(WalletCreditGrant, payload, { appId });
    // One more slot with an earlier one: only the new slot is credited.
    await tier.publishApplied(
      WalletCreditGrant,
      { ...payload, credits: [credits[0]!, { currency: 'coins', amount: '20', reference: `opening:${opening}:slot:4` }] },
      { appId },
    );
    expect(await rowsOf(playerId)).toEqual([
      { reason: 'duplicate_conversion', reference: `opening:${opening}:slot:1`, delta: '20.00' },
      { reason: 'duplicate_conversion', reference: `opening:${opening}:slot:2`, delta: '60.00' },
      { reason: 'duplicate_conversion', reference: `opening:${opening}:slot:4`, delta: '20.00' },
    ]);
    const totals = await ledgerTotals(walletPool(tier), appId, playerId, coins);
    expect(totals).toMatchObject({ sum: '100.00', balance: '100.00', rows: 3 });
  });

  it('lands each reference once when the same credits arrive together under different message ids', async () => {
    const playerId = randomUUID();
    const opening = randomUUID();
    const credits = Array.from({ length: 5 }, (_, slot) => ({ currency: 'coins', amount: '20', reference: `opening:${opening}:slot:${slot}` }));
    const payload = { appId, playerId, reason: 'duplicate_conversion' as const, credits };
    await Promise.all(Array.from({ length: 6 }, () => tier.publishApplied(WalletCreditGrant, payload, { appId })));
    const rows = await rowsOf(playerId);
    expect(rows.map((r) => r.reference).sort()).toEqual(credits.map((c) => c.reference).sort());
    expect(await ledgerTotals(walletPool(tier), appId, playerId, coins)).toMatchObject({ sum: '100.00', balance: '100.00', rows: 5 });
  });

  it('still sums credits without a reference into one row per currency under the message id', async () => {
    const playerId = randomUUID();
    const id = randomUUID();
    await tier.publishApplied(
      WalletCreditGrant,
      {
        appId,
        playerId,
        reason: 'admin',
        credits: [
          { currency: 'coins', amount: '5' },
          { currency: 'coins', amount: '7' },
        ],
      },
      { id, appId },
    );
    expect(await rowsOf(playerId)).toEqual([{ reason: 'admin', reference: id, delta: '12.00' }]);
  });
});
