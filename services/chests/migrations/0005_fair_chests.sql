-- Up Migration
-- Fair chests (docs/fairness.md, docs/content.md): the duplicate and compliance rules of each
-- content version, pity counters, commit-reveal seeds, and what each opening used.

-- NULL: the version has no such rules.
ALTER TABLE content_versions ADD COLUMN duplicates jsonb;
ALTER TABLE content_versions ADD COLUMN compliance jsonb;
-- {<chest slug>: rules} of the version: the rules an opening of that version used, published by
-- the odds endpoint with ?rules_version= (NULL for versions stored before this migration).
ALTER TABLE content_versions ADD COLUMN chest_rules jsonb;

-- The key that encrypts server seeds when FAIRNESS_SEED_KEY is not set (development only: a
-- reader of this table can decrypt the seeds; production sets the variable). One row.
CREATE TABLE fairness_keys (
  id         text PRIMARY KEY,
  key        text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);

-- Per player and pity group: openings since the last one that gave the pity rarity or better.
-- Updated in the opening's transaction, under the row's lock.
CREATE TABLE pity_counters (
  app_id     uuid NOT NULL,
  player_id  uuid NOT NULL,
  pity_group text NOT NULL,
  opens_since integer NOT NULL CHECK (opens_since >= 0),
  -- The pity rarity and hard bound of the last chest type opened in the group (for the listing).
  rarity     text NOT NULL,
  hard       integer NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (app_id, player_id, pity_group)
);

-- Commit-reveal seeds. One active pair per player (revealed_at IS NULL); a rotation reveals it and
-- starts a new one. The server seed is stored encrypted (AES-256-GCM, FAIRNESS_SEED_KEY), so a
-- reader of the database cannot predict rolls; its SHA-256 is the published commitment.
CREATE TABLE player_seeds (
  id                    uuid PRIMARY KEY,
  app_id                uuid NOT NULL,
  player_id             uuid NOT NULL,
  server_seed_encrypted text NOT NULL,
  server_seed_hash      text NOT NULL,
  client_seed           text NOT NULL,
  -- The nonce the next opening with this pair uses.
  next_nonce            integer NOT NULL DEFAULT 0 CHECK (next_nonce >= 0),
  created_at            timestamptz NOT NULL DEFAULT now(),
  revealed_at           timestamptz
);
CREATE UNIQUE INDEX player_seeds_active ON player_seeds (app_id, player_id) WHERE revealed_at IS NULL;
-- Every opening rewrites its pair's row (next_nonce, not indexed): room in each page keeps those
-- updates HOT (no index writes).
ALTER TABLE player_seeds SET (fillfactor = 70);
CREATE INDEX player_seeds_player ON player_seeds (app_id, player_id, created_at DESC);

-- What an opening used: its seed pair and nonce, and the pity state before and after.
ALTER TABLE openings ADD COLUMN seed_id uuid REFERENCES player_seeds (id);
ALTER TABLE openings ADD COLUMN nonce integer;
-- {group, rarity, opensSinceBefore, opensSinceAfter, triggered}; NULL when the chest has no pity.
ALTER TABLE openings ADD COLUMN pity jsonb;
-- The retention sweeper finds old openings by time: a BRIN index costs next to nothing on inserts
-- that arrive in time order.
CREATE INDEX openings_opened_brin ON openings USING brin (opened_at);

-- Down Migration
DROP INDEX openings_opened_brin;
ALTER TABLE openings DROP COLUMN pity;
ALTER TABLE openings DROP COLUMN nonce;
ALTER TABLE openings DROP COLUMN seed_id;
DROP TABLE player_seeds;
DROP TABLE fairness_keys;
DROP TABLE pity_counters;
ALTER TABLE content_versions DROP COLUMN chest_rules;
ALTER TABLE content_versions DROP COLUMN compliance;
ALTER TABLE content_versions DROP COLUMN duplicates;
