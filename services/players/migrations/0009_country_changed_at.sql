-- Up Migration
-- A declared profile cannot be gamed (docs/content.md, "Compliance"): a player changes a declared
-- country at most once per COUNTRY_CHANGE_COOLDOWN_DAYS. When they last did (null: never; the
-- first declaration, from none, does not count, and the studio's corrections do not either).
ALTER TABLE players ADD COLUMN country_changed_at timestamptz;

-- Down Migration
ALTER TABLE players DROP COLUMN country_changed_at;
