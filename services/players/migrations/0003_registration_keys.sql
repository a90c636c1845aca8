-- Up Migration
-- Idempotency-Keys of registrations: a retry with the same key, email, password and caller
-- answers like the first (same player and grants, fresh tokens). No password fingerprint is kept
-- here: a retry's password is checked against the player's argon2id hash.
CREATE TABLE registration_keys (
  app_id     uuid NOT NULL,
  key        text NOT NULL,
  player_id  uuid NOT NULL,
  -- The email exactly as the first request sent it.
  email      text NOT NULL,
  -- The guest whose token called (an upgrade), else NULL.
  caller_id  uuid,
  -- What the first answer reported: initialCurrency, welcomeBonus, starterChestId.
  grants     jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (app_id, key),
  FOREIGN KEY (app_id, player_id) REFERENCES players (app_id, id)
);
CREATE INDEX registration_keys_created ON registration_keys (created_at);

-- Down Migration
DROP TABLE registration_keys;
