-- Up Migration
-- Chests: each app's catalog (from its content versions), every player's chests, the openings
-- that consumed them and the purchases that added them.

-- The content version whose catalog is current, per app.
CREATE TABLE apps (
  app_id          uuid PRIMARY KEY,
  content_version integer NOT NULL,
  updated_at      timestamptz NOT NULL DEFAULT now()
);

-- Every content version an app received, kept for ever: the rules of a chest type always roll
-- against the rarities and collectibles of the version that defined them.
CREATE TABLE content_versions (
  app_id             uuid NOT NULL,
  version            integer NOT NULL,
  starter_chest_type text NOT NULL,
  inventory_capacity integer NOT NULL CHECK (inventory_capacity > 0),
  currencies         text[] NOT NULL,
  -- [{id, name, drop_rate, experience, rank}]
  rarities           jsonb NOT NULL,
  -- [{id, name, description, images, collection_id, rarity}]: what a roll may draw.
  collectibles       jsonb NOT NULL,
  loaded_at          timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (app_id, version)
);

-- Chest types keep their id (a name-based UUID of app and slug) across versions. A type that a
-- newer version leaves out leaves the catalog but stays, so chests of that type still open.
CREATE TABLE chest_types (
  app_id          uuid NOT NULL,
  id              uuid NOT NULL,
  slug            text NOT NULL,
  content_version integer NOT NULL,
  name            text NOT NULL,
  description     text NOT NULL,
  images          jsonb NOT NULL DEFAULT '[]'::jsonb,
  price           jsonb NOT NULL DEFAULT '{}'::jsonb,
  rules           jsonb NOT NULL,
  position        integer NOT NULL,
  in_catalog      boolean NOT NULL DEFAULT true,
  PRIMARY KEY (app_id, id),
  CONSTRAINT chest_types_app_slug UNIQUE (app_id, slug),
  FOREIGN KEY (app_id, content_version) REFERENCES content_versions (app_id, version)
);

-- Purchases as a saga: pending → debited → completed, or → compensating → refunded / failed.
CREATE TABLE purchases (
  id            uuid PRIMARY KEY,
  app_id        uuid NOT NULL,
  player_id     uuid NOT NULL,
  chest_type_id uuid NOT NULL,
  currency      text NOT NULL,
  quantity      integer NOT NULL CHECK (quantity BETWEEN 1 AND 10),
  amount        numeric(20, 2) NOT NULL CHECK (amount > 0),
  status        text NOT NULL CHECK (status IN ('pending', 'debited', 'completed', 'compensating', 'refunded', 'failed')),
  failure       text,
  created_at    timestamptz NOT NULL DEFAULT now(),
  updated_at    timestamptz NOT NULL DEFAULT now(),
  FOREIGN KEY (app_id, chest_type_id) REFERENCES chest_types (app_id, id)
);
CREATE INDEX purchases_unsettled ON purchases (updated_at) WHERE status IN ('pending', 'debited', 'compensating');

-- Every chest a player ever owned; an opened chest keeps its row (opened_at set), so a grant
-- re-delivered with the same id inserts nothing.
CREATE TABLE inventory_chests (
  id            uuid PRIMARY KEY,
  app_id        uuid NOT NULL,
  player_id     uuid NOT NULL,
  chest_type_id uuid NOT NULL,
  source        text NOT NULL CHECK (source IN ('purchased', 'earned', 'welcome', 'special')),
  purchase_id   uuid REFERENCES purchases (id),
  acquired_at   timestamptz NOT NULL DEFAULT now(),
  opened_at     timestamptz,
  FOREIGN KEY (app_id, chest_type_id) REFERENCES chest_types (app_id, id)
);
CREATE INDEX inventory_chests_unopened ON inventory_chests (app_id, player_id, acquired_at) WHERE opened_at IS NULL;

-- One row per consumed chest (the unique chest_id makes a second opening impossible), with the
-- rolled items as shown to the player.
CREATE TABLE openings (
  id              uuid PRIMARY KEY,
  app_id          uuid NOT NULL,
  player_id       uuid NOT NULL,
  chest_id        uuid NOT NULL UNIQUE REFERENCES inventory_chests (id),
  chest_type_id   uuid NOT NULL,
  content_version integer NOT NULL,
  opened_at       timestamptz NOT NULL,
  -- [{slot, collectibleId, collectionId, name, description, images, rarity}]
  items           jsonb NOT NULL,
  experience      integer NOT NULL CHECK (experience >= 0),
  idempotency_key text,
  CONSTRAINT openings_idempotency UNIQUE (app_id, player_id, idempotency_key)
);
CREATE INDEX openings_player ON openings (app_id, player_id, opened_at DESC, id DESC);

-- Down Migration
DROP TABLE openings;
DROP TABLE inventory_chests;
DROP TABLE purchases;
DROP TABLE chest_types;
DROP TABLE content_versions;
DROP TABLE apps;
