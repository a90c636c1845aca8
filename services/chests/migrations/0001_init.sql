-- Up Migration
-- The chests schema starts empty; its tables arrive with the chests features.
SELECT 1;

-- Down Migration
SELECT 1;
