-- Up Migration
-- Webhook endpoints, events and deliveries are the egress worker's (schema egress, its migration
-- 0001, which moves tables still kept here to its schema whole). Tables here that are all empty
-- are dropped; with rows they are left for that move. Both take this advisory lock first, so the
-- two services may migrate in any order, or at once, and no row is lost. This migration touches
-- no other schema.
SELECT pg_advisory_xact_lock(hashtext('ccs-move:webhooks'));

DO $$
DECLARE
  here text := current_schema();
  has_rows boolean;
BEGIN
  IF to_regclass(format('%I.webhook_endpoints', here)) IS NULL THEN
    RETURN;
  END IF;
  EXECUTE format(
    'SELECT EXISTS (SELECT 1 FROM %1$I.webhook_endpoints) OR EXISTS (SELECT 1 FROM %1$I.webhook_events) OR EXISTS (SELECT 1 FROM %1$I.webhook_deliveries)',
    here) INTO has_rows;
  IF has_rows THEN
    RAISE NOTICE 'the webhook tables have rows: egress''s migration 0001 moves them to its schema';
  ELSE
    EXECUTE format('DROP TABLE %1$I.webhook_deliveries, %1$I.webhook_events, %1$I.webhook_endpoints', here);
  END IF;
END
$$;

-- Down Migration
SELECT 1;
