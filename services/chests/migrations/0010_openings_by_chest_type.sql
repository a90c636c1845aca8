-- Up Migration
-- The admin API's observed drops of a chest type (chests.v1.admin_chest_drops) read its openings.
CREATE INDEX openings_chest_type ON openings (app_id, chest_type_id, opened_at);

-- Down Migration
DROP INDEX openings_chest_type;
