-- Up Migration
-- What a player declares for the compliance gates of paid purchases (docs/content.md,
-- "Compliance"): their country (ISO 3166-1 alpha-2, stored upper case; the list of assigned codes
-- is checked by the service) and birth year (the service also refuses years after the current
-- one). Null until given. Personal data: shown to the player alone, never logged.
ALTER TABLE players ADD COLUMN country text CHECK (country ~ '^[A-Z]{2}$');
ALTER TABLE players ADD COLUMN birth_year smallint CHECK (birth_year >= 1900);

-- Down Migration
ALTER TABLE players DROP COLUMN birth_year;
ALTER TABLE players DROP COLUMN country;
