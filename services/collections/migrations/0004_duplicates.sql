-- Up Migration
-- Duplicate conversion (docs/content.md, "Duplicates"): collections decides, when it applies an
-- opening's grant, which items are past the app's max_copies, by the rules of the content version
-- the opening was made with.

-- The duplicate rules of every content version received (rules NULL: the version keeps every
-- copy). A version's rules never change, so a grant made under it is judged by them even after
-- newer versions arrive. Versions applied before this table existed have no row: their grants
-- keep every copy (load the content again to switch conversion on).
CREATE TABLE duplicate_rules (
  app_id          uuid NOT NULL,
  content_version integer NOT NULL,
  rules           jsonb,
  PRIMARY KEY (app_id, content_version)
);

-- A granted item converted instead of kept: what it became. Its row stays in owned_collectibles
-- (one row per granted slot, so the (opening, slot) key keeps a grant exactly once) but it is not
-- a copy: player_collectibles counts only the rows without a conversion. Amount 0: converted into
-- nothing (the rules give its rarity nothing).
ALTER TABLE owned_collectibles
  ADD COLUMN converted_currency text,
  ADD COLUMN converted_amount integer,
  ADD CONSTRAINT owned_collectibles_converted CHECK ((converted_currency IS NULL) = (converted_amount IS NULL) AND coalesce(converted_amount, 0) >= 0);

-- Down Migration
ALTER TABLE owned_collectibles DROP CONSTRAINT owned_collectibles_converted, DROP COLUMN converted_amount, DROP COLUMN converted_currency;
DROP TABLE duplicate_rules;
