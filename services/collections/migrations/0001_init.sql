-- Up Migration
-- The collections schema starts empty; its tables arrive with the collections features.
SELECT 1;

-- Down Migration
SELECT 1;
