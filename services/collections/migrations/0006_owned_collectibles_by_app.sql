-- Up Migration
-- Every granted item inserts an entry in each index of owned_collectibles (docs/performance.md,
-- "Postgres per statement (2026-11-26, issue 19)"). The (app, player, collectible, acquired_at)
-- index is read by one query only: the admin stats' per-app totals (admin-stats-repo.ts), which
-- filter on the app alone and read opening_id from the table anyway. (The players' reads use
-- player_collectibles; the grant path, the (opening_id, slot) key.) That index's entries land at
-- random places (a random player id second), so nearly every insert dirties another leaf page.
-- An index of the app alone serves the same query: its entries are appended at the end of the
-- app's range and stored deduplicated. Measured on 900,000 items, in batches of 36: about 280 B
-- of WAL and 0.03 dirtied pages per item, against 1,800 B and 0.3. Built without CONCURRENTLY
-- (migrations run in one transaction): grant batches wait for the build, their messages stay in
-- JetStream meanwhile.
CREATE INDEX owned_collectibles_app ON owned_collectibles (app_id);
DROP INDEX owned_collectibles_player;

-- Down Migration
CREATE INDEX owned_collectibles_player ON owned_collectibles (app_id, player_id, collectible_id, acquired_at);
DROP INDEX owned_collectibles_app;
