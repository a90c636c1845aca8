-- Up Migration
-- Spend limits (docs/design.md §7, docs/compliance.md): a player's spend in a UTC day or month is the
-- sum of their payments in paid currencies created in it and not released (pending, debited,
-- completed, or compensating until the refund settles). A payment row recorded `pending` under the
-- limit, before the wallet is asked, is the reservation: a refused debit (failed), a compensation
-- (refunded) or the payments sweeper settling a crashed saga releases it. This index answers the
-- sum for one player without reading other players' payments.
CREATE INDEX payments_player_spend ON payments (app_id, player_id, created_at)
  WHERE status IN ('pending', 'debited', 'completed', 'compensating');

-- Down Migration
DROP INDEX payments_player_spend;
