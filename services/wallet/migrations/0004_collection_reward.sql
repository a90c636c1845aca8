-- Up Migration
-- Collection rewards (docs/content.md, "Collection rewards"): collections credits a completed
-- collection's currencies, one ledger row per currency, referenced by the completion
-- (`completion:<player>:<collection>`); the ledger_once index keeps each to one row.
ALTER TABLE ledger DROP CONSTRAINT ledger_reason_check;
ALTER TABLE ledger ADD CONSTRAINT ledger_reason_check CHECK (reason IN (
  'credit', 'debit', 'debit_refund',
  'initial_currency', 'welcome_bonus', 'registration', 'refund', 'admin', 'duplicate_conversion', 'collection_reward'));

-- Down Migration
ALTER TABLE ledger DROP CONSTRAINT ledger_reason_check;
ALTER TABLE ledger ADD CONSTRAINT ledger_reason_check CHECK (reason IN (
  'credit', 'debit', 'debit_refund',
  'initial_currency', 'welcome_bonus', 'registration', 'refund', 'admin', 'duplicate_conversion'));
