-- Up Migration
-- Idempotency-Keys of guest creations: a retry with the same key answers like the first (the same
-- guest and grants, fresh tokens) while the player is still a guest.
CREATE TABLE guest_keys (
  app_id     uuid NOT NULL,
  key        text NOT NULL,
  player_id  uuid NOT NULL,
  -- What the first answer reported: initialCurrency, welcomeBonus, starterChestId.
  grants     jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (app_id, key),
  FOREIGN KEY (app_id, player_id) REFERENCES players (app_id, id)
);
CREATE INDEX guest_keys_created ON guest_keys (created_at);

-- The token a refresh rotated this one into: a retry of that refresh within the grace window,
-- while the successor is still unused, replaces the successor instead of revoking the family.
ALTER TABLE refresh_tokens ADD COLUMN replaced_by uuid;

-- Down Migration
ALTER TABLE refresh_tokens DROP COLUMN replaced_by;
DROP TABLE guest_keys;
