-- Up Migration
-- A studio's grant of chests under a reference (npm run admin -- grant-chests --reference, POST
-- /api/v1/admin/players/{id}/chests): which grant the reference made, so granting again answers
-- "already granted" instead of "granted" (the grant consumer adds each derived chest id once
-- either way), and the same reference for another chest type or quantity is refused.
--
-- players kept this table (its migration 0010). Where it still holds it, the table is moved here
-- whole (rows, key), which only its owner may do: chests' database role is a member of players'
-- (docs/deploy.md). players' 0012 drops its table only while it is empty and otherwise leaves it
-- to this move; both take one advisory lock first, so the two services may migrate in any order,
-- or at once, and no row is lost.
SELECT pg_advisory_xact_lock(hashtext('ccs-move:studio_chest_grants'));

DO $$
BEGIN
  IF current_schema() <> 'players'
     AND EXISTS (SELECT 1 FROM pg_tables WHERE schemaname = 'players' AND tablename = 'studio_chest_grants')
     AND NOT EXISTS (SELECT 1 FROM pg_tables WHERE schemaname = current_schema() AND tablename = 'studio_chest_grants') THEN
    EXECUTE format('ALTER TABLE players.studio_chest_grants SET SCHEMA %I', current_schema());
  END IF;
END
$$;

CREATE TABLE IF NOT EXISTS studio_chest_grants (
  app_id uuid NOT NULL,
  player_id uuid NOT NULL,
  reference text NOT NULL,
  chest_type_id text NOT NULL,
  quantity integer NOT NULL CHECK (quantity BETWEEN 1 AND 100),
  granted_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (app_id, player_id, reference)
);

-- Down Migration
DROP TABLE studio_chest_grants;
