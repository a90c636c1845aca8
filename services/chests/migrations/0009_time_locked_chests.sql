-- Up Migration
-- Time-locked chests (docs/content.md, "Time-locked chests"): a chest type's `unlock` rules, the
-- players' unlock slots of each content version, and each inventory chest's timer.
ALTER TABLE chest_types ADD COLUMN unlock jsonb;
ALTER TABLE content_versions ADD COLUMN unlock_slots integer NOT NULL DEFAULT 1 CHECK (unlock_slots BETWEEN 1 AND 10);

-- unlocks_at: null until the timer starts (the chest is `locked`); in the future while it runs
-- (`unlocking`, holding one of the player's unlock slots); past once unlocked (a skip sets it to
-- the moment of the skip). Chests whose type has no `unlock` ignore it.
ALTER TABLE inventory_chests ADD COLUMN unlock_started_at timestamptz;
ALTER TABLE inventory_chests ADD COLUMN unlocks_at timestamptz;
-- A player's running timers (the slot count).
CREATE INDEX inventory_chests_unlocking ON inventory_chests (app_id, player_id, unlocks_at) WHERE unlocks_at IS NOT NULL AND opened_at IS NULL;

-- The key debits become the chest debits of both sagas that pay for a chest's use: a key to open
-- it, or a skip of its timer (`unlock:<id>` in the wallet's ledger). Same states, same sweeper.
ALTER TABLE key_debits RENAME TO chest_debits;
ALTER INDEX key_debits_unsettled RENAME TO chest_debits_unsettled;
ALTER TABLE chest_debits ADD COLUMN purpose text NOT NULL DEFAULT 'key' CHECK (purpose IN ('key', 'unlock_skip'));

-- Down Migration
ALTER TABLE chest_debits DROP COLUMN purpose;
ALTER INDEX chest_debits_unsettled RENAME TO key_debits_unsettled;
ALTER TABLE chest_debits RENAME TO key_debits;
DROP INDEX inventory_chests_unlocking;
ALTER TABLE inventory_chests DROP COLUMN unlocks_at;
ALTER TABLE inventory_chests DROP COLUMN unlock_started_at;
ALTER TABLE content_versions DROP COLUMN unlock_slots;
ALTER TABLE chest_types DROP COLUMN unlock;
