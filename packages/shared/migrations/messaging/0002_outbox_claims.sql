-- Up Migration
-- A relay pass claims the rows it is about to publish for a while (instead of holding a
-- transaction and its row locks across the network), so replicas do not publish the same rows.
ALTER TABLE outbox ADD COLUMN claimed_until timestamptz;

-- Down Migration
ALTER TABLE outbox DROP COLUMN claimed_until;
