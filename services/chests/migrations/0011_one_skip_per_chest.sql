-- Up Migration
-- Concurrent timer skips of one chest debit once (docs/content.md, "Time-locked chests"): a skip
-- claims the chest by recording its debit before asking the wallet, and at most one skip debit of
-- a chest may be pending or completed. A second skip's record fails on this index before anything
-- is debited; it waits for the first and answers the chest as the first left it.
--
-- Chests skipped twice before this index (the race it closes: a real double charge) keep their
-- first skip; every other live skip debit of the chest moves to `refunding`, so the chest-debit
-- sweeper gives the amount back (wallet reference unlock:<id>).
UPDATE chest_debits d SET status = 'refunding', updated_at = now() - interval '1 day'
 WHERE d.purpose = 'unlock_skip' AND d.status IN ('pending', 'completed')
   AND EXISTS (
     SELECT 1 FROM chest_debits e
      WHERE e.purpose = 'unlock_skip' AND e.status IN ('pending', 'completed') AND e.app_id = d.app_id AND e.chest_id = d.chest_id
        AND ((e.status = 'completed') > (d.status = 'completed')
             OR ((e.status = 'completed') = (d.status = 'completed') AND (e.created_at, e.id) < (d.created_at, d.id))));
CREATE UNIQUE INDEX chest_debits_one_skip ON chest_debits (app_id, chest_id) WHERE purpose = 'unlock_skip' AND status IN ('pending', 'completed');

-- Down Migration
DROP INDEX chest_debits_one_skip;
