-- Up Migration
-- Inventory pages: ordered by acquisition time then id (chests bought together share their time),
-- with the columns the counts group by, so a page and the counts are index scans whatever the size.
CREATE INDEX inventory_chests_unopened_pages ON inventory_chests (app_id, player_id, acquired_at, id)
  INCLUDE (chest_type_id, source) WHERE opened_at IS NULL;
DROP INDEX inventory_chests_unopened;

-- Down Migration
CREATE INDEX inventory_chests_unopened ON inventory_chests (app_id, player_id, acquired_at) WHERE opened_at IS NULL;
DROP INDEX inventory_chests_unopened_pages;
