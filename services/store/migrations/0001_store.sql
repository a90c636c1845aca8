-- Up Migration
-- The store service (docs/store.md): verified App Store and Google Play purchases, what each
-- granted, the refunds the stores announce, and the apps' Google credentials.

-- Each app's store section and compliance, per content version; `apps.content_version` is the current one.
CREATE TABLE apps (
  app_id          uuid PRIMARY KEY,
  content_version integer NOT NULL DEFAULT 0,
  updated_at      timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE content_versions (
  app_id     uuid NOT NULL,
  version    integer NOT NULL,
  store      jsonb,
  compliance jsonb,
  currencies text[] NOT NULL DEFAULT '{}',
  PRIMARY KEY (app_id, version)
);

-- One row per store transaction (Apple transactionId, Google orderId), across every app: a
-- transaction grants once, to one player of one app. A refund notice may come before the player
-- submits the transaction: the row is then `refunded_unclaimed` (a later submission is refused as
-- revoked) or, after a reversal, `unclaimed` (a later submission claims it), with no player.
CREATE TABLE purchases (
  id               uuid PRIMARY KEY,
  app_id           uuid NOT NULL,
  player_id        uuid,
  platform         text NOT NULL CHECK (platform IN ('apple', 'google')),
  transaction_id   text NOT NULL CHECK (length(transaction_id) BETWEEN 1 AND 200),
  product_id       text,
  store_product_id text NOT NULL,
  environment      text,
  quantity         integer NOT NULL DEFAULT 1 CHECK (quantity >= 1),
  price            numeric(21, 6),
  currency         text CHECK (currency ~ '^[A-Z]{3}$'),
  purchased_at     timestamptz,
  verified_at      timestamptz,
  purchase_token   text,
  -- {currencies: [{currency, amount}], chests: [{id, chestTypeId}]}: what the purchase granted.
  granted          jsonb,
  state            text NOT NULL CHECK (state IN ('granted', 'refunded', 'unclaimed', 'refunded_unclaimed')),
  refunded_at      timestamptz,
  -- The store's time of the last notice that moved the refund state: an older notice arriving late changes nothing.
  refund_event_at  timestamptz,
  -- Google: when the purchase was consumed (Google refunds what is not acknowledged within three days).
  consumed_at      timestamptz,
  consume_attempts integer NOT NULL DEFAULT 0,
  next_consume_at  timestamptz,
  created_at       timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT purchases_transaction UNIQUE (platform, transaction_id),
  CHECK ((state IN ('unclaimed', 'refunded_unclaimed')) = (player_id IS NULL))
);
CREATE INDEX purchases_player ON purchases (app_id, player_id, verified_at DESC);
CREATE INDEX purchases_app_verified ON purchases (app_id, verified_at);
CREATE INDEX purchases_to_consume ON purchases (next_consume_at)
  WHERE platform = 'google' AND consumed_at IS NULL AND state = 'granted';

-- Each refund applied, and each reversal of one: what it took back or gave again.
CREATE TABLE refunds (
  id              uuid PRIMARY KEY,
  purchase_id     uuid NOT NULL REFERENCES purchases (id),
  app_id          uuid NOT NULL,
  player_id       uuid NOT NULL,
  kind            text NOT NULL CHECK (kind IN ('refund', 'reversal')),
  reason          text NOT NULL,
  policy          text NOT NULL CHECK (policy IN ('debt', 'revoke_then_debt')),
  currencies      jsonb NOT NULL,
  chest_ids       uuid[] NOT NULL,
  notification_id text,
  event_at        timestamptz NOT NULL,
  created_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX refunds_player ON refunds (app_id, player_id, created_at DESC);
CREATE INDEX refunds_purchase ON refunds (purchase_id);
CREATE INDEX refunds_app_created ON refunds (app_id, created_at);

-- Every store notification taken, once (Apple's notificationUUID; Google: `voided:<orderId>` for a
-- voided purchase, else Pub/Sub's messageId), with what was done.
CREATE TABLE notifications (
  platform        text NOT NULL CHECK (platform IN ('apple', 'google')),
  notification_id text NOT NULL CHECK (length(notification_id) BETWEEN 1 AND 200),
  app_id          uuid NOT NULL,
  type            text NOT NULL,
  transaction_id  text,
  outcome         text NOT NULL,
  received_at     timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (platform, notification_id)
);

-- An app's Google service-account key file, encrypted (AtRestCipher under STORE_CREDENTIALS_KEY).
CREATE TABLE google_credentials (
  app_id         uuid PRIMARY KEY,
  client_email   text NOT NULL,
  private_key_id text NOT NULL,
  sealed_key     text NOT NULL,
  updated_at     timestamptz NOT NULL DEFAULT now()
);

-- The development key of the credentials' encryption (STORE_CREDENTIALS_KEY unset): protects nothing against a database reader.
CREATE TABLE credential_keys (
  id  text PRIMARY KEY,
  key text NOT NULL
);

-- Down Migration
DROP TABLE credential_keys;
DROP TABLE google_credentials;
DROP TABLE notifications;
DROP TABLE refunds;
DROP TABLE purchases;
DROP TABLE content_versions;
DROP TABLE apps;
