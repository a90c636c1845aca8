-- Up Migration
-- The players schema starts empty; its tables arrive with the players features.
SELECT 1;

-- Down Migration
SELECT 1;
