-- Up Migration
-- Collection rewards (docs/content.md, "Collection rewards"): each collection's reward of the
-- current content, and the completions, one per player and collection: the unique key is what
-- makes the reward exactly once, whichever grant completed the collection and however often it
-- was delivered.
ALTER TABLE collections ADD COLUMN completion_reward jsonb;

CREATE TABLE collection_completions (
  app_id          uuid NOT NULL,
  player_id       uuid NOT NULL,
  collection_id   text NOT NULL,
  completed_at    timestamptz NOT NULL DEFAULT now(),
  -- The content version whose collection was completed, and the reward it gave (null: none).
  content_version integer NOT NULL,
  reward          jsonb,
  PRIMARY KEY (app_id, player_id, collection_id)
);

-- Down Migration
DROP TABLE collection_completions;
ALTER TABLE collections DROP COLUMN completion_reward;
