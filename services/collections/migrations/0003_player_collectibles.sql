-- Up Migration
-- What each player owns, one row per collectible: copies and first and last acquisition. Kept in
-- the transaction that inserts the granted items, so a collection read costs the same whether a
-- player owns ten copies or ten thousand (owned_collectibles keeps every granted item).
CREATE TABLE player_collectibles (
  app_id            uuid NOT NULL,
  player_id         uuid NOT NULL,
  collectible_id    text NOT NULL,
  copies            integer NOT NULL CHECK (copies > 0),
  first_acquired_at timestamptz NOT NULL,
  last_acquired_at  timestamptz NOT NULL,
  PRIMARY KEY (app_id, player_id, collectible_id)
);
CREATE INDEX player_collectibles_recent ON player_collectibles (app_id, player_id, last_acquired_at DESC, collectible_id);

INSERT INTO player_collectibles (app_id, player_id, collectible_id, copies, first_acquired_at, last_acquired_at)
SELECT app_id, player_id, collectible_id, count(*), min(acquired_at), max(acquired_at)
  FROM owned_collectibles GROUP BY app_id, player_id, collectible_id;

-- Down Migration
DROP TABLE player_collectibles;
