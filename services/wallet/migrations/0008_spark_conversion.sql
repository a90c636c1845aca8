-- Up Migration
-- Spark points left at a banner's end converted to its spark currency (docs/design.md §8): a credit
-- reason of its own in the ledger.
ALTER TABLE ledger DROP CONSTRAINT ledger_reason_check;
ALTER TABLE ledger ADD CONSTRAINT ledger_reason_check CHECK (reason IN (
  'credit', 'debit', 'debit_refund',
  'initial_currency', 'welcome_bonus', 'registration', 'refund', 'admin', 'duplicate_conversion', 'collection_reward',
  'studio_grant', 'spark_conversion'));

-- Down Migration
ALTER TABLE ledger DROP CONSTRAINT ledger_reason_check;
ALTER TABLE ledger ADD CONSTRAINT ledger_reason_check CHECK (reason IN (
  'credit', 'debit', 'debit_refund',
  'initial_currency', 'welcome_bonus', 'registration', 'refund', 'admin', 'duplicate_conversion', 'collection_reward',
  'studio_grant'));
