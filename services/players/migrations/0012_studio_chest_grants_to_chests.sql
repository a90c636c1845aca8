-- Up Migration
-- Studio chest grants belong to chests (its endpoint chests.v1.admin_grant_chests and its table
-- chests.studio_chest_grants, chests' migration 0021). This hands players' table over without
-- losing a row, whichever service migrates first (the two take the same advisory lock):
--   * chests has its table (it migrated first): the rows it does not hold yet (written by a
--     players replica of the previous release after chests copied) are copied there, then the
--     table here is dropped;
--   * chests has not migrated yet: the table is moved to its schema whole (rows, key), and
--     chests' 0021 finds it there.
SELECT pg_advisory_xact_lock(hashtext('ccs-move:studio_chest_grants'));

DO $$
BEGIN
  IF to_regclass(format('%I.studio_chest_grants', current_schema())) IS NULL THEN
    RETURN;
  END IF;
  IF to_regclass('chests.studio_chest_grants') IS NOT NULL THEN
    EXECUTE format(
      'INSERT INTO chests.studio_chest_grants (app_id, player_id, reference, chest_type_id, quantity, granted_at)
       SELECT app_id, player_id, reference, chest_type_id, quantity, granted_at FROM %I.studio_chest_grants
       ON CONFLICT (app_id, player_id, reference) DO NOTHING',
      current_schema());
    EXECUTE format('DROP TABLE %I.studio_chest_grants', current_schema());
  ELSE
    CREATE SCHEMA IF NOT EXISTS chests;
    EXECUTE format('ALTER TABLE %I.studio_chest_grants SET SCHEMA chests', current_schema());
  END IF;
END
$$;

-- Down Migration
-- The table comes back empty: its rows stay with chests, which grants now.
CREATE TABLE studio_chest_grants (
  app_id uuid NOT NULL,
  player_id uuid NOT NULL,
  reference text NOT NULL,
  chest_type_id text NOT NULL,
  quantity integer NOT NULL CHECK (quantity BETWEEN 1 AND 100),
  granted_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (app_id, player_id, reference)
);
