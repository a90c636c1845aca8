-- Up Migration
-- Duplicate conversions (collections' saga step): a collectible rolled past the app's max_copies
-- becomes currency, credited with one ledger row per converted item, referenced by its opening
-- and slot (`opening:<id>:slot:<n>`); the ledger_once index keeps each reference to one row.
ALTER TABLE ledger DROP CONSTRAINT ledger_reason_check;
ALTER TABLE ledger ADD CONSTRAINT ledger_reason_check CHECK (reason IN (
  'credit', 'debit', 'debit_refund',
  'initial_currency', 'welcome_bonus', 'registration', 'refund', 'admin', 'duplicate_conversion'));

-- Down Migration
ALTER TABLE ledger DROP CONSTRAINT ledger_reason_check;
ALTER TABLE ledger ADD CONSTRAINT ledger_reason_check CHECK (reason IN (
  'credit', 'debit', 'debit_refund',
  'initial_currency', 'welcome_bonus', 'registration', 'refund', 'admin'));
