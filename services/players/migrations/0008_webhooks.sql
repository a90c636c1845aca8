-- Up Migration
-- Signed webhooks (docs/webhooks.md): a studio's endpoints, the events they were sent, and one
-- delivery per (endpoint, event), retried with exponential backoff for 24 h and then parked.
CREATE TABLE webhook_endpoints (
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
CREATE INDEX webhook_endpoints_app ON webhook_endpoints (app_id, created_at);

-- An event as delivered (the body's JSON), kept once for all of its deliveries.
CREATE TABLE webhook_events (
  id          uuid PRIMARY KEY,
  app_id      uuid NOT NULL,
  type        text NOT NULL,
  player_id   uuid,
  occurred_at timestamptz NOT NULL,
  body        text NOT NULL,
  received_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE webhook_deliveries (
  id               uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  endpoint_id      uuid NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
  event_id         uuid NOT NULL REFERENCES webhook_events (id),
  status           text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'parked')),
  attempts         integer NOT NULL DEFAULT 0,
  created_at       timestamptz NOT NULL DEFAULT now(),
  -- The retry window ends 24 h after this (reset by a manual retry of a parked delivery).
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
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries (endpoint_id, created_at DESC);

-- Down Migration
DROP TABLE webhook_deliveries;
DROP TABLE webhook_events;
DROP TABLE webhook_endpoints;
