-- Up Migration
-- A purchase may carry the client's Idempotency-Key: a retry with it gets the first answer
-- (stored when the purchase completes) instead of buying again. A purchase that fails or is
-- refunded releases its key, so the client may correct the request and retry with it.
ALTER TABLE purchases ADD COLUMN idempotency_key text;
ALTER TABLE purchases ADD COLUMN answer jsonb;
CREATE UNIQUE INDEX purchases_idempotency ON purchases (app_id, player_id, idempotency_key) WHERE idempotency_key IS NOT NULL;

-- Down Migration
DROP INDEX purchases_idempotency;
ALTER TABLE purchases DROP COLUMN answer;
ALTER TABLE purchases DROP COLUMN idempotency_key;
