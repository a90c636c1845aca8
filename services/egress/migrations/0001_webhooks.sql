-- Up Migration
-- Signed webhooks (docs/webhooks.md), sent by the egress worker: a studio's endpoints, the events
-- they were sent, and one delivery per (endpoint, event), retried with exponential backoff for
-- 24 h and then parked.
--
-- Tables still in players' schema (where a database migrated by an older players has them) are
-- moved here as they are (rows, indexes, foreign keys) when this schema has none yet, in this
-- migration's transaction (only their owner may: egress's database role is a member of
-- players', docs/deploy.md). players' 0013 drops them there only while they are empty. Both take
-- this advisory lock first, so the two services may migrate in any order, or at once.
SELECT pg_advisory_xact_lock(hashtext('ccs-move:webhooks'));

DO $$
BEGIN
  IF to_regclass('players.webhook_endpoints') IS NOT NULL AND to_regclass(format('%I.webhook_endpoints', current_schema())) IS NULL THEN
    EXECUTE format('ALTER TABLE players.webhook_endpoints SET SCHEMA %I', current_schema());
    EXECUTE format('ALTER TABLE players.webhook_events SET SCHEMA %I', current_schema());
    EXECUTE format('ALTER TABLE players.webhook_deliveries SET SCHEMA %I', current_schema());
  END IF;
END
$$;

CREATE TABLE IF NOT EXISTS webhook_endpoints (
  id          uuid PRIMARY KEY,
  app_id      uuid NOT NULL,
  url         text NOT NULL,
  description text NOT NULL DEFAULT '',
  -- The event types it receives; empty: every type.
  events      text[] NOT NULL DEFAULT '{}',
  enabled     boolean NOT NULL DEFAULT true,
  secret      text NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS webhook_endpoints_app ON webhook_endpoints (app_id, created_at);

-- An event as delivered (the body's JSON), kept once for all of its deliveries.
CREATE TABLE IF NOT EXISTS webhook_events (
  id          uuid PRIMARY KEY,
  app_id      uuid NOT NULL,
  type        text NOT NULL,
  player_id   uuid,
  occurred_at timestamptz NOT NULL,
  body        text NOT NULL,
  received_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE IF NOT EXISTS webhook_deliveries (
  id               uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  endpoint_id      uuid NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
  event_id         uuid NOT NULL REFERENCES webhook_events (id),
  status           text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'parked')),
  -- Counted when an attempt is claimed, before its request is sent.
  attempts         integer NOT NULL DEFAULT 0,
  created_at       timestamptz NOT NULL DEFAULT now(),
  -- The retry window ends 24 h after this (reset by a manual retry).
  window_start     timestamptz NOT NULL DEFAULT now(),
  next_attempt_at  timestamptz NOT NULL DEFAULT now(),
  -- A sender that took the delivery holds it until then; after a crash another one takes it.
  claimed_until    timestamptz,
  last_attempt_at  timestamptz,
  last_status_code integer,
  last_error       text,
  delivered_at     timestamptz,
  UNIQUE (endpoint_id, event_id)
);
CREATE INDEX IF NOT EXISTS webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
CREATE INDEX IF NOT EXISTS webhook_deliveries_endpoint ON webhook_deliveries (endpoint_id, created_at DESC);

-- A delivery keeps an error class, never the receiver's answer or its address (docs/design.md §6): the
-- texts players stored ("HTTP 500: <body>", "ECONNREFUSED: connect … 10.0.0.7:80") become their
-- class, anything unrecognised null.
UPDATE webhook_deliveries
   SET last_error = CASE
         WHEN last_error ~ '^HTTP [0-9]{3}' THEN 'http_' || substring(last_error FROM '^HTTP ([0-9]{3})')
         WHEN last_error ~* '^no answer within|timeout|timed out|ETIMEDOUT|UND_ERR_.*TIMEOUT' THEN 'timeout'
         WHEN last_error ~* 'cert|tls|ssl|EPROTO' THEN 'tls'
         WHEN last_error ~* 'ECONNREFUSED|ECONNRESET|ENOTFOUND|EAI_AGAIN|EHOSTUNREACH|ENETUNREACH|UND_ERR_SOCKET|other side closed|fetch failed' THEN 'refused'
         ELSE NULL
       END
 WHERE last_error IS NOT NULL
   AND last_error !~ '^(timeout|refused|tls|destination_forbidden|http_[0-9]{3})$';
ALTER TABLE webhook_deliveries
  ADD CONSTRAINT webhook_deliveries_error_class
  CHECK (last_error IS NULL OR last_error ~ '^(timeout|refused|tls|destination_forbidden|http_[0-9]{3})$');

-- Down Migration
ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_error_class;
DROP TABLE webhook_deliveries;
DROP TABLE webhook_events;
DROP TABLE webhook_endpoints;
