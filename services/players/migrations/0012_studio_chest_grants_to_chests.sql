-- Up Migration
-- Studio chest grants are the chests service's (chests.v1.admin_grant_chests, its table
-- chests.studio_chest_grants). An empty table here is dropped; one with rows is left for chests'
-- migration 0021, which moves it to its schema whole. Both take this advisory lock first, so the
-- two services may migrate in any order, or at once, and no row is lost. This migration touches
-- no other schema.
SELECT pg_advisory_xact_lock(hashtext('ccs-move:studio_chest_grants'));

DO $$
DECLARE
  has_rows boolean;
BEGIN
  IF to_regclass(format('%I.studio_chest_grants', current_schema())) IS NULL THEN
    RETURN;
  END IF;
  EXECUTE format('SELECT EXISTS (SELECT 1 FROM %I.studio_chest_grants)', current_schema()) INTO has_rows;
  IF has_rows THEN
    RAISE NOTICE 'studio_chest_grants has rows: chests'' migration 0021 moves them to its schema';
  ELSE
    EXECUTE format('DROP TABLE %I.studio_chest_grants', current_schema());
  END IF;
END
$$;

-- Down Migration
SELECT 1;
