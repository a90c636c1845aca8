-- Up Migration
-- Currency is granted by the studio (docs/content.md, "Player credits and studio grants").
-- A currency listed in the content's compliance.paid_currencies is marked paid: the player credit
-- endpoint never credits it. Content loaded before this migration marks nothing until the app's
-- content is loaded again (docs/operations.md says so).
ALTER TABLE currencies ADD COLUMN paid boolean NOT NULL DEFAULT false;

-- The studio's grants (POST /api/v1/admin/players/{id}/credits), one per app and reference (a store
-- receipt or order id). A grant claims its reference first, in the transaction that credits: the
-- primary key makes two concurrent grants of one reference one credit (the second waits, then
-- finds the first), and the row keeps the first answer (balance_after) for a repeat. Player,
-- currency and amount tell a repeat from a different grant under a reused reference.
CREATE TABLE studio_grants (
  app_id        uuid NOT NULL,
  reference     text NOT NULL CHECK (length(reference) BETWEEN 1 AND 200),
  player_id     uuid NOT NULL,
  currency_id   uuid NOT NULL REFERENCES currencies (id),
  amount        numeric(20, 2) NOT NULL CHECK (amount > 0),
  -- Set by the same transaction once the balance is credited (never seen null outside it).
  balance_after numeric(20, 2),
  request_id    text,
  created_at    timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (app_id, reference)
);

ALTER TABLE ledger DROP CONSTRAINT ledger_reason_check;
ALTER TABLE ledger ADD CONSTRAINT ledger_reason_check CHECK (reason IN (
  'credit', 'debit', 'debit_refund',
  'initial_currency', 'welcome_bonus', 'registration', 'refund', 'admin', 'duplicate_conversion', 'collection_reward',
  'studio_grant'));

-- Down Migration
ALTER TABLE ledger DROP CONSTRAINT ledger_reason_check;
ALTER TABLE ledger ADD CONSTRAINT ledger_reason_check CHECK (reason IN (
  'credit', 'debit', 'debit_refund',
  'initial_currency', 'welcome_bonus', 'registration', 'refund', 'admin', 'duplicate_conversion', 'collection_reward'));
DROP TABLE studio_grants;
ALTER TABLE currencies DROP COLUMN paid;
