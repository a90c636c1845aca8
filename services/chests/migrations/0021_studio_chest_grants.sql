-- Up Migration
-- A studio's grant of chests under a reference (npm run admin -- grant-chests --reference, POST
-- /api/v1/admin/players/{id}/chests): which grant the reference made, so granting again answers
-- "already granted" instead of "granted" (the grant consumer adds each derived chest id once
-- either way), and the same reference for another chest type or quantity is refused.
--
-- The table was players' (its migration 0010) and moves here with every row. This migration and
-- players' 0012 may run in either order, or at once (each service migrates its own schema under
-- its own lock), so both take one transaction-scoped advisory lock for the move first:
--   * chests first: the table is created here and players' rows are copied; players' 0012 later
--     copies the rows written since (an older players replica still serving grants) and drops
--     its table;
--   * players first: its 0012 moves the table here whole (ALTER TABLE ... SET SCHEMA), and this
--     migration finds it and copies nothing.
-- A row is never dropped before it is in this schema.
SELECT pg_advisory_xact_lock(hashtext('ccs-move:studio_chest_grants'));

CREATE TABLE IF NOT EXISTS studio_chest_grants (
  app_id uuid NOT NULL,
  player_id uuid NOT NULL,
  reference text NOT NULL,
  chest_type_id text NOT NULL,
  quantity integer NOT NULL CHECK (quantity BETWEEN 1 AND 100),
  granted_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (app_id, player_id, reference)
);

DO $$
BEGIN
  IF to_regclass('players.studio_chest_grants') IS NOT NULL AND current_schema() <> 'players' THEN
    INSERT INTO studio_chest_grants (app_id, player_id, reference, chest_type_id, quantity, granted_at)
    SELECT app_id, player_id, reference, chest_type_id, quantity, granted_at FROM players.studio_chest_grants
    ON CONFLICT (app_id, player_id, reference) DO NOTHING;
  END IF;
END
$$;

-- Down Migration
DROP TABLE studio_chest_grants;
