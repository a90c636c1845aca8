-- Up Migration
-- Collections: each app's rarities, collections and collectibles (from its content versions) and
-- every collectible each player owns.

-- The content version applied per app; a message with an older or equal version changes nothing.
CREATE TABLE apps (
  app_id          uuid PRIMARY KEY,
  content_version integer NOT NULL,
  updated_at      timestamptz NOT NULL DEFAULT now()
);

-- Content rows are kept for ever: a newer version updates them, and rows it leaves out are
-- retired (hidden), never deleted, so what players own keeps its meaning.
CREATE TABLE rarities (
  app_id      uuid NOT NULL REFERENCES apps (app_id),
  id          text NOT NULL,
  name        text NOT NULL,
  drop_rate   double precision NOT NULL,
  experience  integer NOT NULL,
  rank        integer NOT NULL,
  retired_at  timestamptz,
  PRIMARY KEY (app_id, id)
);

CREATE TABLE collections (
  app_id      uuid NOT NULL REFERENCES apps (app_id),
  id          text NOT NULL,
  name        text NOT NULL,
  description text NOT NULL,
  -- Order of the content file, the default order of lists.
  position    integer NOT NULL,
  retired_at  timestamptz,
  PRIMARY KEY (app_id, id)
);

CREATE TABLE collectibles (
  app_id        uuid NOT NULL REFERENCES apps (app_id),
  id            text NOT NULL,
  collection_id text NOT NULL,
  name          text NOT NULL,
  description   text NOT NULL,
  images        jsonb NOT NULL DEFAULT '[]'::jsonb,
  rarity        text NOT NULL,
  position      integer NOT NULL,
  retired_at    timestamptz,
  PRIMARY KEY (app_id, id),
  FOREIGN KEY (app_id, collection_id) REFERENCES collections (app_id, id)
);
CREATE INDEX collectibles_collection ON collectibles (app_id, collection_id, position);

-- One row per granted item of a chest opening: duplicates of a collectible are separate rows
-- (counted, not lost). The key makes a re-delivered grant insert nothing. No foreign key to the
-- content: a grant may arrive before its content version, and owned items outlive content changes.
CREATE TABLE owned_collectibles (
  opening_id     uuid NOT NULL,
  slot           integer NOT NULL,
  app_id         uuid NOT NULL,
  player_id      uuid NOT NULL,
  collectible_id text NOT NULL,
  collection_id  text NOT NULL,
  rarity         text NOT NULL,
  acquired_at    timestamptz NOT NULL,
  granted_at     timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (opening_id, slot)
);
CREATE INDEX owned_collectibles_player ON owned_collectibles (app_id, player_id, collectible_id, acquired_at);

-- Down Migration
DROP TABLE owned_collectibles;
DROP TABLE collectibles;
DROP TABLE collections;
DROP TABLE rarities;
DROP TABLE apps;
