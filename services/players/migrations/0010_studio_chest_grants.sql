-- Up Migration
-- A studio's grant of chests under a reference (npm run admin -- grant-chests --reference): which
-- grant the reference made, so running the command again answers "already granted" instead of
-- "granted" (the chests service adds each derived chest id once either way), and the same
-- reference for another chest type or quantity is refused.
CREATE TABLE studio_chest_grants (
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
