-- Up Migration
-- A banner's rules in the odds log and under the odds change notice period (docs/fairness.md, "The
-- odds log"; docs/content.md, "Banners"). A banner's rules are what changes what its pulls roll: the
-- chest type pulled, the pity group, `featured`, `guarantee` and `ten_pull_floor`.

-- The odds log names what each entry logs: a chest type (`chest_type_id`) or a banner (`banner_id`,
-- its slug), never both. A banner entry's hash takes `banner:<banner_id>:` where a chest entry's
-- takes its chest_type_id, so that no banner entry hashes the same text as a chest entry.
ALTER TABLE odds_log
  ALTER COLUMN chest_type_id DROP NOT NULL,
  ADD COLUMN banner_id text,
  ADD CONSTRAINT odds_log_names_one CHECK (num_nonnulls(chest_type_id, banner_id) = 1);
CREATE UNIQUE INDEX odds_log_banner_version ON odds_log (app_id, banner_id, rules_version) WHERE banner_id IS NOT NULL;

-- Each banner an app's content has ever had (kept when a later version leaves it out, as chest
-- types are): the content version whose rules for it are in force (`rules_version`: the version
-- that last changed them, as the odds log names it; the rules are that version's banner of this
-- slug), and a change waiting out its notice period (`pending_*`, in force once
-- `pending_effective_at` has passed, by the database's clock; the next load folds it in).
CREATE TABLE banner_rules (
  app_id               uuid NOT NULL,
  banner_id            text NOT NULL,
  rules_version        integer NOT NULL,
  pending_version      integer,
  pending_effective_at timestamptz,
  PRIMARY KEY (app_id, banner_id),
  CONSTRAINT banner_rules_pending CHECK ((pending_version IS NULL) = (pending_effective_at IS NULL)),
  CONSTRAINT banner_rules_version FOREIGN KEY (app_id, rules_version) REFERENCES content_versions (app_id, version),
  CONSTRAINT banner_rules_pending_version FOREIGN KEY (app_id, pending_version) REFERENCES content_versions (app_id, version)
);

-- Banners loaded before: in force as the last version up to the app's current one that had them.
-- Their first log entries come with the app's next content version.
INSERT INTO banner_rules (app_id, banner_id, rules_version)
SELECT DISTINCT ON (v.app_id, b.banner ->> 'slug') v.app_id, b.banner ->> 'slug', v.version
  FROM content_versions v
  JOIN apps a ON a.app_id = v.app_id AND v.version <= a.content_version
  CROSS JOIN LATERAL jsonb_array_elements(COALESCE(v.banners, '[]'::jsonb)) AS b(banner)
 ORDER BY v.app_id, b.banner ->> 'slug', v.version DESC;

-- Down Migration
DROP TABLE banner_rules;
DROP INDEX odds_log_banner_version;
DELETE FROM odds_log WHERE banner_id IS NOT NULL;
ALTER TABLE odds_log DROP CONSTRAINT odds_log_names_one, DROP COLUMN banner_id, ALTER COLUMN chest_type_id SET NOT NULL;
