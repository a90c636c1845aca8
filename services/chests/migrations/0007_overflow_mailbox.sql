-- Up Migration
-- The overflow mailbox (docs/content.md, "Overflow mailbox"): where a granted chest waits when the
-- player's inventory is full and the content says `inventory_overflow: mailbox`.

-- The version's overflow rules; versions stored before this migration keep the old behaviour
-- (grants added beyond the capacity), which is `refuse`.
ALTER TABLE content_versions ADD COLUMN inventory_overflow text NOT NULL DEFAULT 'refuse'
  CHECK (inventory_overflow IN ('refuse', 'mailbox'));
ALTER TABLE content_versions ADD COLUMN mailbox_ttl_days integer NOT NULL DEFAULT 30 CHECK (mailbox_ttl_days > 0);

-- The id is the inventory chest id the grant chose: a claimed item becomes the chest of that id,
-- so a grant delivered again finds it in one of the two tables and adds nothing. A claimed row
-- stays (claimed_at set) until the sweeper deletes it with the expired ones, some time after
-- expires_at: meanwhile a second claim can say it was claimed.
CREATE TABLE mailbox_items (
  id            uuid PRIMARY KEY,
  app_id        uuid NOT NULL,
  player_id     uuid NOT NULL,
  chest_type_id uuid NOT NULL,
  source        text NOT NULL CHECK (source IN ('purchased', 'earned', 'welcome', 'special')),
  received_at   timestamptz NOT NULL DEFAULT now(),
  -- Fixed on arrival from the TTL of the content then current (a later TTL changes new items only).
  expires_at    timestamptz NOT NULL,
  claimed_at    timestamptz,
  FOREIGN KEY (app_id, chest_type_id) REFERENCES chest_types (app_id, id)
);
-- A player's waiting items, soonest to expire first (the list's order and its count).
CREATE INDEX mailbox_items_waiting ON mailbox_items (app_id, player_id, expires_at, id) WHERE claimed_at IS NULL;
-- The sweeper deletes by age.
CREATE INDEX mailbox_items_expiry ON mailbox_items (expires_at);

-- Down Migration
DROP TABLE mailbox_items;
ALTER TABLE content_versions DROP COLUMN mailbox_ttl_days;
ALTER TABLE content_versions DROP COLUMN inventory_overflow;
