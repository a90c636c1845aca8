-- Up Migration
-- Debt (docs/store.md, "Debt"): a store refund takes back the currencies its purchase granted even
-- when they were spent, so a balance may go below zero; a negative balance is a debt, which blocks
-- every debit of that currency until credits bring it back to zero. Only a store refund takes a
-- balance below zero, or further below: the refund's statement says so for its transaction
-- (the setting wallet.store_refund), and the trigger below refuses any other change that leaves a
-- balance below zero and lower than it was (a credit that covers part of a debt raises it, and
-- passes). The ledger says the same of its rows. The debit's own statement keeps its condition
-- (the balance covers the amount), so a purchase never takes a balance below zero.
ALTER TABLE balances DROP CONSTRAINT balances_amount_check;
ALTER TABLE ledger DROP CONSTRAINT ledger_balance_after_check;
ALTER TABLE ledger ADD CONSTRAINT ledger_balance_after_check
  CHECK (balance_after >= 0 OR delta > 0 OR reason = 'store_refund');

CREATE FUNCTION balances_below_zero_by_store_refund_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'UPDATE' AND NEW.amount >= OLD.amount THEN
    RETURN NEW;
  END IF;
  IF current_setting('wallet.store_refund', true) = 'on' THEN
    RETURN NEW;
  END IF;
  RAISE EXCEPTION 'a balance below zero is refused: only a store refund takes a balance below zero'
    USING ERRCODE = 'check_violation';
END
$$;
-- Called only for a row that would end below zero: every other change pays nothing for it.
CREATE TRIGGER balances_below_zero BEFORE INSERT OR UPDATE ON balances
  FOR EACH ROW WHEN (NEW.amount < 0) EXECUTE FUNCTION balances_below_zero_by_store_refund_only();

-- Down Migration
-- Only possible once no balance and no ledger row is below zero.
DROP TRIGGER balances_below_zero ON balances;
DROP FUNCTION balances_below_zero_by_store_refund_only();
ALTER TABLE ledger DROP CONSTRAINT ledger_balance_after_check;
ALTER TABLE ledger ADD CONSTRAINT ledger_balance_after_check CHECK (balance_after >= 0);
ALTER TABLE balances ADD CONSTRAINT balances_amount_check CHECK (amount >= 0);
