-- Up Migration
-- Odds change notice periods (docs/design.md §7, docs/compliance.md): with content
-- `compliance.odds_change_notice_hours` = N, new rules for a chest type already in the catalog take
-- effect N hours after the load. Until then the row's `rules` and `content_version` stay the rules
-- in force (what openings roll and the odds document discloses) and the coming ones wait here;
-- readers take the pending rules once `pending_effective_at` has passed (no load needed), and the
-- next content load folds them into `rules`. A newer load during the notice period replaces them.
ALTER TABLE chest_types
  ADD COLUMN pending_version integer,
  ADD COLUMN pending_rules jsonb,
  ADD COLUMN pending_effective_at timestamptz,
  ADD CONSTRAINT chest_types_pending CHECK (
    (pending_version IS NULL) = (pending_rules IS NULL) AND (pending_version IS NULL) = (pending_effective_at IS NULL)
  ),
  ADD CONSTRAINT chest_types_pending_version FOREIGN KEY (app_id, pending_version) REFERENCES content_versions (app_id, version);

-- Down Migration
ALTER TABLE chest_types
  DROP CONSTRAINT chest_types_pending_version,
  DROP CONSTRAINT chest_types_pending,
  DROP COLUMN pending_effective_at,
  DROP COLUMN pending_rules,
  DROP COLUMN pending_version;
