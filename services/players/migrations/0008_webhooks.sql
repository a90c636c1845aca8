-- Up Migration
-- Webhooks are the egress worker's: its migration 0001 creates their tables in its own schema.
-- This number stays so that databases migrated in order keep their history; it creates nothing
-- (0013 hands over any webhook table still in this schema).
SELECT 1;

-- Down Migration
SELECT 1;
