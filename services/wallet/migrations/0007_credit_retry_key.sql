-- Up Migration
-- A credit whose client sent no Idempotency-Key travels under a key the gateway made for that one
-- HTTP request (contracts: RetryKeySchema), so the bus may send it again to another replica after
-- a timeout. The credit's single statement writes the key on its ledger row; a repeat meets this
-- index, and its whole statement (balance included) fails with nothing changed.
ALTER TABLE ledger ADD COLUMN retry_key uuid;
CREATE UNIQUE INDEX ledger_retry_once ON ledger (app_id, player_id, retry_key) WHERE retry_key IS NOT NULL;

-- Down Migration
DROP INDEX ledger_retry_once;
ALTER TABLE ledger DROP COLUMN retry_key;
