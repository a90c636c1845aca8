-- Up Migration
-- Dissolving collectibles into trade tokens (docs/content.md, "Trading"): the credit has a reason of
-- its own in the ledger, referenced by the dissolve.
ALTER TABLE ledger DROP CONSTRAINT ledger_reason_check;
ALTER TABLE ledger ADD CONSTRAINT ledger_reason_check CHECK (reason IN (
  'credit', 'debit', 'debit_refund',
  'initial_currency', 'welcome_bonus', 'registration', 'refund', 'admin', 'duplicate_conversion', 'collection_reward',
  'studio_grant', 'spark_conversion', 'store_purchase', 'store_refund', 'store_refund_reversed', 'trade_dissolve'));

-- Down Migration
ALTER TABLE ledger DROP CONSTRAINT ledger_reason_check;
ALTER TABLE ledger ADD CONSTRAINT ledger_reason_check CHECK (reason IN (
  'credit', 'debit', 'debit_refund',
  'initial_currency', 'welcome_bonus', 'registration', 'refund', 'admin', 'duplicate_conversion', 'collection_reward',
  'studio_grant', 'spark_conversion', 'store_purchase', 'store_refund', 'store_refund_reversed'));
