-- Up Migration
-- The odds log (docs/design.md §7): append-only and hash-chained, one entry per chest type whose rules
-- a content version changed (every chest type of an app's first version logged). `entry_hash` =
-- SHA-256 of previous_hash || rules_sha256 || chest_type_id || rules_version || effective_at (the
-- ISO 8601 UTC string with milliseconds); `previous_hash` is the app's previous entry's hash, 64
-- zeros for its first. Entries are only ever inserted (docs/fairness.md, "The odds log").
CREATE TABLE odds_log (
  app_id uuid NOT NULL,
  seq integer NOT NULL CHECK (seq >= 1),
  chest_type_id uuid NOT NULL,
  rules_version integer NOT NULL,
  rules_sha256 text NOT NULL CHECK (rules_sha256 ~ '^[0-9a-f]{64}$'),
  effective_at timestamptz NOT NULL,
  previous_hash text NOT NULL CHECK (previous_hash ~ '^[0-9a-f]{64}$'),
  entry_hash text NOT NULL CHECK (entry_hash ~ '^[0-9a-f]{64}$'),
  PRIMARY KEY (app_id, seq),
  UNIQUE (app_id, chest_type_id, rules_version)
);

-- Down Migration
DROP TABLE odds_log;
