-- Up Migration
-- One store of the Idempotency-Keys of openings, single or batch: the key, the chests it opened
-- (in order) and their openings, written by the openings' own statement. A key keeps the scope
-- it was made in (`kind`: a single open's key and a batch's key are apart, as before), so every
-- key stored before replays as it did: the batches' rows are renamed in place, and each single
-- open's key moves from its opening to a row of one chest.
ALTER TABLE opening_batches RENAME TO opening_keys;
ALTER TABLE opening_keys ADD COLUMN kind text NOT NULL DEFAULT 'batch' CHECK (kind IN ('one', 'batch'));
ALTER TABLE opening_keys ALTER COLUMN kind DROP DEFAULT;
ALTER TABLE opening_keys DROP CONSTRAINT opening_batches_pkey;
ALTER TABLE opening_keys ADD CONSTRAINT opening_keys_pkey PRIMARY KEY (app_id, player_id, kind, idempotency_key);
INSERT INTO opening_keys (app_id, player_id, kind, idempotency_key, chest_ids, opening_ids, created_at)
SELECT app_id, player_id, 'one', idempotency_key, ARRAY[chest_id], ARRAY[id], opened_at FROM openings WHERE idempotency_key IS NOT NULL;
ALTER TABLE openings DROP CONSTRAINT openings_idempotency;
ALTER TABLE openings DROP COLUMN idempotency_key;
-- The retention sweeper deletes keys with their openings, by time.
CREATE INDEX opening_keys_created_brin ON opening_keys USING brin (created_at);

-- Down Migration
DROP INDEX opening_keys_created_brin;
ALTER TABLE openings ADD COLUMN idempotency_key text;
ALTER TABLE openings ADD CONSTRAINT openings_idempotency UNIQUE (app_id, player_id, idempotency_key);
UPDATE openings o SET idempotency_key = k.idempotency_key
  FROM opening_keys k WHERE k.kind = 'one' AND o.id = k.opening_ids[1];
DELETE FROM opening_keys WHERE kind = 'one';
ALTER TABLE opening_keys DROP CONSTRAINT opening_keys_pkey;
ALTER TABLE opening_keys DROP COLUMN kind;
ALTER TABLE opening_keys ADD CONSTRAINT opening_batches_pkey PRIMARY KEY (app_id, player_id, idempotency_key);
ALTER TABLE opening_keys RENAME TO opening_batches;
