-- Up Migration
-- Webhook endpoints, events and deliveries are the egress worker's (schema egress, its migration
-- 0001). Any still in this schema are handed over without losing a row, whichever service
-- migrates first (egress's 0001 takes the same advisory lock):
--   * egress has no tables yet: they move to its schema whole (rows, keys, indexes), and its
--     0001 finds them there;
--   * egress has its tables: the rows here are copied there (a delivery's error text becomes
--     null unless it is already one of egress's error classes), then the tables here are dropped.
SELECT pg_advisory_xact_lock(hashtext('ccs-move:webhooks'));

DO $$
DECLARE
  here text := current_schema();
BEGIN
  IF to_regclass(format('%I.webhook_endpoints', here)) IS NULL THEN
    RETURN;
  END IF;
  IF to_regclass('egress.webhook_endpoints') IS NULL THEN
    CREATE SCHEMA IF NOT EXISTS egress;
    EXECUTE format('ALTER TABLE %I.webhook_endpoints SET SCHEMA egress', here);
    EXECUTE format('ALTER TABLE %I.webhook_events SET SCHEMA egress', here);
    EXECUTE format('ALTER TABLE %I.webhook_deliveries SET SCHEMA egress', here);
    RETURN;
  END IF;
  EXECUTE format(
    'INSERT INTO egress.webhook_endpoints (id, app_id, url, description, events, enabled, secret, created_at, updated_at)
     SELECT id, app_id, url, description, events, enabled, secret, created_at, updated_at FROM %I.webhook_endpoints
     ON CONFLICT (id) DO NOTHING', here);
  EXECUTE format(
    'INSERT INTO egress.webhook_events (id, app_id, type, player_id, occurred_at, body, received_at)
     SELECT id, app_id, type, player_id, occurred_at, body, received_at FROM %I.webhook_events
     ON CONFLICT (id) DO NOTHING', here);
  EXECUTE format(
    $sql$INSERT INTO egress.webhook_deliveries (id, endpoint_id, event_id, status, attempts, created_at, window_start, next_attempt_at,
       claimed_until, last_attempt_at, last_status_code, last_error, delivered_at)
     SELECT id, endpoint_id, event_id, status, attempts, created_at, window_start, next_attempt_at, claimed_until, last_attempt_at,
            last_status_code,
            CASE WHEN last_error ~ '^(timeout|refused|tls|destination_forbidden|http_[0-9]{3})$' THEN last_error END,
            delivered_at
       FROM %I.webhook_deliveries
     ON CONFLICT DO NOTHING$sql$, here);
  EXECUTE format('DROP TABLE %I.webhook_deliveries, %I.webhook_events, %I.webhook_endpoints', here, here, here);
END
$$;

-- Down Migration
SELECT 1;
