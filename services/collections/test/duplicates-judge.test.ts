import { describe, expect, it } from 'vitest';
import type { DuplicatesRules } from '@ccs/shared';
import { holdingKey, judge, type ItemToJudge } from '../src/duplicates/judge.js';
import { conversionCredit, conversionCreditId, conversionReference } from '../src/duplicates/credit.js';

const rules = (max: number, byRarity: Record<string, number> = { common: 20, rare: 60 }): DuplicatesRules => ({
  max_copies: max,
  convert: { currency: 'coins', by_rarity: byRarity },
});
const item = (key: string, rarity: string, r: DuplicatesRules | null): ItemToJudge => ({ key, rarity, rules: r });

describe('judging duplicates', () => {
  it('keeps items until the player holds max_copies, counting the copies held and those kept before in the batch', () => {
    const held = new Map([['a', 1]]);
    const verdicts = judge(
      [
        item('a', 'common', rules(3)),
        item('b', 'rare', rules(3)),
        item('a', 'common', rules(3)),
        item('a', 'common', rules(3)),
        item('a', 'rare', rules(3)),
      ],
      held,
    );
    expect(verdicts).toEqual([null, null, null, { currency: 'coins', amount: 20 }, { currency: 'coins', amount: 60 }]);
    // What was read is not changed.
    expect(held.get('a')).toBe(1);
  });

  it('judges each item by its own rules: none keeps every copy, a converted item takes no copy', () => {
    const verdicts = judge(
      [
        item('a', 'common', rules(1)),
        item('a', 'common', rules(1)),
        item('a', 'common', rules(2)),
        item('a', 'common', null),
        item('a', 'common', rules(2)),
      ],
      new Map(),
    );
    // The second is converted (1 held), so the third, under max 2, is the second copy; without rules the fourth is kept.
    expect(verdicts).toEqual([null, { currency: 'coins', amount: 20 }, null, null, { currency: 'coins', amount: 20 }]);
  });

  it('converts an item into nothing when the rules list no amount for its rarity, and holdings past max stay converted', () => {
    expect(judge([item('a', 'legendary', rules(2))], new Map([['a', 5]]))).toEqual([{ currency: 'coins', amount: 0 }]);
  });

  it('keys holdings by app, player and collectible, whatever the case of the ids', () => {
    expect(holdingKey('A1', 'B2', 'x')).toBe(holdingKey('a1', 'b2', 'x'));
  });
});

describe("an opening's conversion credit", () => {
  const grant = {
    openingId: 'f4b2b1a0-0000-4000-8000-000000000001',
    appId: 'f4b2b1a0-0000-4000-8000-000000000002',
    playerId: 'f4b2b1a0-0000-4000-8000-000000000003',
  };

  it('has one credit per converted slot with an amount, referenced by opening and slot, under an id of the opening', () => {
    const m = conversionCredit(
      grant,
      [
        { slot: 1, currency: 'coins', amount: 20 },
        { slot: 2, currency: 'coins', amount: 0 },
        { slot: 4, currency: 'coins', amount: 60 },
      ],
      { requestId: 'r' },
    )!;
    expect(m.id).toBe(conversionCreditId(grant.openingId));
    expect(m.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(m.id).not.toBe(grant.openingId);
    expect(m.payload).toEqual({
      appId: grant.appId,
      playerId: grant.playerId,
      reason: 'duplicate_conversion',
      credits: [
        { currency: 'coins', amount: '20', reference: conversionReference(grant.openingId, 1) },
        { currency: 'coins', amount: '60', reference: `opening:${grant.openingId}:slot:4` },
      ],
    });
  });

  it('is not written when nothing converted is worth anything', () => {
    expect(conversionCredit(grant, [{ slot: 0, currency: 'coins', amount: 0 }], { requestId: 'r' })).toBeUndefined();
    expect(conversionCredit(grant, [], { requestId: 'r' })).toBeUndefined();
  });
});
