-- Up Migration
-- Every content version of an app as it was loaded (the admin API lists them and diffs them
-- against the current one). Versions loaded before this migration are not stored.
CREATE TABLE app_contents (
  app_id    uuid NOT NULL REFERENCES apps (id),
  version   integer NOT NULL,
  content   jsonb NOT NULL,
  loaded_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (app_id, version)
);

-- Down Migration
DROP TABLE app_contents;
