-- Up Migration
-- Batch opens made with an Idempotency-Key: a retry with the key and the same chests, in the same
-- order, gets the first answer (the openings by id); the key with other chests is a 409.
CREATE TABLE opening_batches (
  app_id          uuid NOT NULL,
  player_id       uuid NOT NULL,
  idempotency_key text NOT NULL,
  chest_ids       uuid[] NOT NULL,
  opening_ids     uuid[] NOT NULL,
  created_at      timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (app_id, player_id, idempotency_key)
);

-- Down Migration
DROP TABLE opening_batches;
