-- Up Migration
-- The support desk (docs/console.md, "Players"):
-- * A player the studio locked (`locked_at`): every request with their access token is refused
--   (403 player_locked) and no token is issued to them (login, refresh) until it is unlocked.
-- * Looking players up by the start of their email in any case, and the newest players first.
-- * The agent's note on an admin action, kept in the audit log with it.
ALTER TABLE players ADD COLUMN locked_at timestamptz;
CREATE INDEX players_app_email_prefix ON players (app_id, lower(email) text_pattern_ops) WHERE email IS NOT NULL;
CREATE INDEX players_app_newest ON players (app_id, created_at DESC, id DESC);
ALTER TABLE admin_audit ADD COLUMN note text;

-- Down Migration
ALTER TABLE admin_audit DROP COLUMN note;
DROP INDEX players_app_newest;
DROP INDEX players_app_email_prefix;
ALTER TABLE players DROP COLUMN locked_at;
