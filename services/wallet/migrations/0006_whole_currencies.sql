-- Up Migration
-- A currency counted in whole units (a key, a ticket: content's `whole: true`): the player credit
-- refuses a fraction of it (422 amount_not_whole), as it refuses a negative amount.
ALTER TABLE currencies ADD COLUMN whole boolean NOT NULL DEFAULT false;

-- Down Migration
ALTER TABLE currencies DROP COLUMN whole;
