-- Up Migration
-- The complete gachas of a content version (docs/design.md §7: a rewarded collection some of whose
-- collectibles only paid chests drop), found at load from the whole content, which chests keeps
-- only in part: the odds simulator names them for the chests concerned, with what to change.
-- NULL for versions stored before.
ALTER TABLE content_versions ADD COLUMN complete_gachas jsonb;

-- Down Migration
ALTER TABLE content_versions DROP COLUMN complete_gachas;
