-- Up Migration
-- The wallet schema starts empty; its tables arrive with the wallet features.
SELECT 1;

-- Down Migration
SELECT 1;
