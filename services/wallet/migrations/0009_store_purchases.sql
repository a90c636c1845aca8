-- Up Migration
-- Verified store purchases (docs/store.md): what a purchase bought is credited with a reason of its
-- own, and a refund takes it back (store_refund) or its reversal gives it again (store_refund_reversed).
ALTER TABLE ledger DROP CONSTRAINT ledger_reason_check;
ALTER TABLE ledger ADD CONSTRAINT ledger_reason_check CHECK (reason IN (
  'credit', 'debit', 'debit_refund',
  'initial_currency', 'welcome_bonus', 'registration', 'refund', 'admin', 'duplicate_conversion', 'collection_reward',
  'studio_grant', 'spark_conversion', 'store_purchase', 'store_refund', 'store_refund_reversed'));

-- Down Migration
ALTER TABLE ledger DROP CONSTRAINT ledger_reason_check;
ALTER TABLE ledger ADD CONSTRAINT ledger_reason_check CHECK (reason IN (
  'credit', 'debit', 'debit_refund',
  'initial_currency', 'welcome_bonus', 'registration', 'refund', 'admin', 'duplicate_conversion', 'collection_reward',
  'studio_grant', 'spark_conversion'));
