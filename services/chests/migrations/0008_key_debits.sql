-- Up Migration
-- Key-required chests (docs/content.md): the chest type's key, and the opening saga's log of key
-- debits. pending: recorded before the wallet debit; completed: in the opening's transaction;
-- refunding → refunded: the chest could not be consumed, or a crash left it pending (the sweeper).
ALTER TABLE chest_types ADD COLUMN requires_key jsonb;

CREATE TABLE key_debits (
  id         uuid PRIMARY KEY,
  app_id     uuid NOT NULL,
  player_id  uuid NOT NULL,
  chest_id   uuid NOT NULL,
  currency   text NOT NULL,
  amount     integer NOT NULL CHECK (amount > 0),
  status     text NOT NULL CHECK (status IN ('pending', 'completed', 'refunding', 'refunded')),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX key_debits_unsettled ON key_debits (updated_at) WHERE status IN ('pending', 'refunding');

-- Down Migration
DROP TABLE key_debits;
ALTER TABLE chest_types DROP COLUMN requires_key;
