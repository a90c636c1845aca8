-- Up Migration
-- The studio's support reads a player's payments (purchases, keys, timer skips) newest first,
-- whatever their status (docs/console.md, "Players"); the spend index covers only those that count.
CREATE INDEX payments_player ON payments (app_id, player_id, created_at DESC);

-- Down Migration
DROP INDEX payments_player;
