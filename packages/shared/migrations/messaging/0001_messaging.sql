-- Up Migration
-- Tables every service keeps in its own schema for durable messaging.

-- Messages written in the same transaction as the change they announce; the relay publishes them.
CREATE TABLE outbox (
  id           uuid PRIMARY KEY,
  subject      text NOT NULL,
  payload      jsonb NOT NULL,
  headers      jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at   timestamptz NOT NULL DEFAULT now(),
  published_at timestamptz
);
CREATE INDEX outbox_unpublished ON outbox (created_at) WHERE published_at IS NULL;

-- Ids of durable messages already applied: a second delivery changes nothing.
CREATE TABLE processed_messages (
  message_id   text PRIMARY KEY,
  consumer     text NOT NULL,
  processed_at timestamptz NOT NULL DEFAULT now()
);

-- Messages that could not be applied after bounded retries, kept for an operator.
CREATE TABLE parked_messages (
  id         bigserial PRIMARY KEY,
  message_id text NOT NULL,
  consumer   text NOT NULL,
  subject    text NOT NULL,
  payload    jsonb,
  error      text NOT NULL,
  parked_at  timestamptz NOT NULL DEFAULT now()
);

-- Down Migration
DROP TABLE parked_messages;
DROP TABLE processed_messages;
DROP TABLE outbox;
