-- Up Migration
-- The audit log of the admin API (docs/operations.md, "Admin API"): who (which secret key), what
-- (the operation and its target), when, and how it ended, for every call a studio's tools make.
CREATE TABLE admin_audit (
  id         bigserial PRIMARY KEY,
  app_id     uuid NOT NULL,
  at         timestamptz NOT NULL DEFAULT now(),
  actor      text NOT NULL,
  action     text NOT NULL,
  target     text,
  status     integer NOT NULL,
  request_id text NOT NULL
);
CREATE INDEX admin_audit_app ON admin_audit (app_id, at DESC, id DESC);

-- Down Migration
DROP TABLE admin_audit;
