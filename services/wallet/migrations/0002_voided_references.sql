-- Up Migration
-- A refund that arrives before its debit (a purchase given up after a crash or a timeout) voids
-- the reference, so the late debit is refused instead of taking money nobody will refund.
CREATE TABLE voided_references (
  app_id     uuid NOT NULL,
  reference  text NOT NULL,
  voided_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (app_id, reference)
);

-- Down Migration
DROP TABLE voided_references;
