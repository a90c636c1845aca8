-- Up Migration
-- Chests a store refund revoked (docs/architecture.md, "Store refunds"): a refund under
-- `revoke_then_debt` removes the purchase's unopened chests from the inventory and the mailbox and
-- keeps here what putting them back needs; a reversal of the refund puts them back under the same
-- id. One row per chest id, for ever: revoked while `restored_at` is NULL, restored otherwise (a
-- later refund of the same purchase revokes it again, the row rewritten).
--
-- A refund may be applied before the chest's grant (the two messages go to different consumers):
-- its chest is then recorded without its chest columns (a tombstone, `revoked_from` NULL), and the
-- grant, arriving while the row is revoked, adds nothing and fills the columns in (`revoked_from`
-- = 'grant'); a restored tombstone lets the grant add the chest as usual. The row also keeps a
-- revoked chest's grant, delivered again, out of the inventory.
CREATE TABLE revoked_chests (
  id                uuid PRIMARY KEY,
  app_id            uuid NOT NULL,
  player_id         uuid NOT NULL,
  -- The store's purchase, and the refund that revoked the chest last.
  store_purchase_id uuid NOT NULL,
  refund_id         uuid NOT NULL,
  revoked_at        timestamptz NOT NULL DEFAULT now(),
  -- The reversal that restored it, and when (both NULL while revoked).
  reversal_id       uuid,
  restored_at       timestamptz,
  -- Where the chest was when revoked: the inventory, the mailbox (waiting, unclaimed), or its grant
  -- arrived after the refund; NULL: its grant has not arrived.
  revoked_from      text CHECK (revoked_from IN ('inventory', 'mailbox', 'grant')),
  -- The chest as it was (NULL in a tombstone): an inventory chest is put back with these.
  chest_type_id     uuid,
  source            text CHECK (source IN ('purchased', 'earned', 'welcome', 'special')),
  purchase_id       uuid,
  banner            text,
  acquired_at       timestamptz,
  unlock_started_at timestamptz,
  unlocks_at        timestamptz,
  CHECK ((revoked_from IS NULL) = (chest_type_id IS NULL) AND (chest_type_id IS NULL) = (source IS NULL)),
  CHECK ((reversal_id IS NULL) = (restored_at IS NULL))
);
-- A player's revoked chests (support and audit reads).
CREATE INDEX revoked_chests_player ON revoked_chests (app_id, player_id, revoked_at);

-- Down Migration
DROP TABLE revoked_chests;
