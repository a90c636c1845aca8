-- Up Migration
-- Gacha banners (docs/design.md §8, docs/content.md "Banners").
-- A content version's banners, as loaded (NULL for versions stored before: none).
ALTER TABLE content_versions ADD COLUMN banners jsonb;

-- The banner whose pull bought a chest: it opens as a pull of that banner (the 50/50, the
-- guarantee, the group's pity) whenever it is opened, so a pull interrupted after its payment
-- loses nothing. NULL: an ordinary chest.
ALTER TABLE inventory_chests ADD COLUMN banner text;

-- What a banner opening recorded (meta.banner): {bannerId, featured, guaranteedBefore,
-- sparkPointsAfter, floorRerolled}; NULL for other openings.
ALTER TABLE openings ADD COLUMN banner jsonb;

-- A player's standing in a banner pity group (a banner's pity_group, else its slug), carried
-- across the group's banners: the guarantee flag and the pity counter (written only by banner
-- openings, in the same transaction as their openings, under the seed pair's nonce
-- compare-and-set), the pulls, and the spark points: a pull adds one per opening, an exchange
-- takes `spark.cost` (never below zero), and once the group's last banner has ended what is left
-- converts to that banner's `spark.currency` or lapses (`settled_points` totals what was settled).
CREATE TABLE banner_standings (
  app_id              uuid NOT NULL,
  player_id           uuid NOT NULL,
  pity_group          text NOT NULL,
  guaranteed_featured boolean NOT NULL DEFAULT false,
  opens_since         integer NOT NULL DEFAULT 0 CHECK (opens_since >= 0),
  pulls               integer NOT NULL DEFAULT 0 CHECK (pulls >= 0),
  spark_points        integer NOT NULL DEFAULT 0 CHECK (spark_points >= 0),
  settled_points      integer NOT NULL DEFAULT 0 CHECK (settled_points >= 0),
  settled_at          timestamptz,
  updated_at          timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (app_id, player_id, pity_group)
);
CREATE INDEX banner_standings_unsettled ON banner_standings (app_id, pity_group) WHERE spark_points > 0;

-- Spark exchanges: one featured collectible of the player's choice for `cost` of the group's points, on a banner.
CREATE TABLE spark_exchanges (
  id              uuid PRIMARY KEY,
  app_id          uuid NOT NULL,
  player_id       uuid NOT NULL,
  banner          text NOT NULL,
  pity_group      text NOT NULL,
  collectible_id  text NOT NULL,
  cost            integer NOT NULL CHECK (cost > 0),
  points_after    integer NOT NULL CHECK (points_after >= 0),
  idempotency_key text,
  created_at      timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX spark_exchanges_idempotency ON spark_exchanges (app_id, player_id, idempotency_key) WHERE idempotency_key IS NOT NULL;
CREATE INDEX spark_exchanges_player ON spark_exchanges (app_id, player_id, created_at DESC);

-- Down Migration
DROP TABLE spark_exchanges;
DROP TABLE banner_standings;
ALTER TABLE openings DROP COLUMN banner;
ALTER TABLE inventory_chests DROP COLUMN banner;
ALTER TABLE content_versions DROP COLUMN banners;
