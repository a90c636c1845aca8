-- Up Migration
-- Wallet: each app's currencies, each player's balances and the append-only ledger behind them.
-- Money is NUMERIC(20,2) everywhere: exact, never floats; arithmetic happens here, in SQL.

-- The part of each app's content the wallet owns (applied from AppContentLoaded, newest version wins).
CREATE TABLE apps (
  app_id                uuid PRIMARY KEY,
  content_version       integer NOT NULL,
  player_credit_allowed boolean NOT NULL,
  updated_at            timestamptz NOT NULL DEFAULT now()
);

-- A currency keeps its id for ever once created for (app, code); content updates rename it or
-- change its maximum, and a currency left out of newer content is retired, never deleted.
CREATE TABLE currencies (
  id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  app_id      uuid NOT NULL REFERENCES apps (app_id),
  code        text NOT NULL,
  name        text NOT NULL,
  max_credit  numeric(20, 2) NOT NULL CHECK (max_credit > 0),
  position    integer NOT NULL DEFAULT 0,
  retired_at  timestamptz,
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT currencies_app_code UNIQUE (app_id, code)
);

-- One row per (app, player, currency); a balance can never go below zero, whatever the caller.
CREATE TABLE balances (
  app_id      uuid NOT NULL,
  player_id   uuid NOT NULL,
  currency_id uuid NOT NULL REFERENCES currencies (id),
  amount      numeric(20, 2) NOT NULL CHECK (amount >= 0),
  updated_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (app_id, player_id, currency_id)
);

-- Every change of every balance, in order. Rows are only ever inserted (see the trigger below).
CREATE TABLE ledger (
  id            bigserial PRIMARY KEY,
  app_id        uuid NOT NULL,
  player_id     uuid NOT NULL,
  currency_id   uuid NOT NULL REFERENCES currencies (id),
  delta         numeric(20, 2) NOT NULL CHECK (delta <> 0),
  balance_after numeric(20, 2) NOT NULL CHECK (balance_after >= 0),
  reason        text NOT NULL CHECK (reason IN (
                  'credit', 'debit', 'debit_refund',
                  'initial_currency', 'welcome_bonus', 'registration', 'refund', 'admin')),
  -- Idempotency key, grant message id or debit reference: what this change answers to.
  reference     text,
  request_id    text,
  created_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX ledger_player ON ledger (app_id, player_id, currency_id, id);
-- A grant message or a debit reference moves money once, even if the code above it were wrong.
-- (Credits are guarded by idempotency_keys instead: an expired key may be used again.)
CREATE UNIQUE INDEX ledger_once ON ledger (app_id, player_id, currency_id, reason, reference)
  WHERE reference IS NOT NULL AND reason <> 'credit';

CREATE FUNCTION ledger_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'the wallet ledger is append-only (% refused)', TG_OP
    USING ERRCODE = 'insufficient_privilege';
END
$$;
CREATE TRIGGER ledger_no_update_or_delete BEFORE UPDATE OR DELETE ON ledger
  FOR EACH ROW EXECUTE FUNCTION ledger_append_only();
CREATE TRIGGER ledger_no_truncate BEFORE TRUNCATE ON ledger
  FOR EACH STATEMENT EXECUTE FUNCTION ledger_append_only();

-- Idempotency-Key of the credit endpoint, per app and player: the first successful answer is
-- kept and returned again for the same body; the primary key stops two concurrent uses.
CREATE TABLE idempotency_keys (
  app_id       uuid NOT NULL,
  player_id    uuid NOT NULL,
  key          text NOT NULL,
  request_hash text NOT NULL,
  response     jsonb,
  created_at   timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (app_id, player_id, key)
);
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);

-- Debits by reference (purchases), so a retried debit changes nothing and a refund happens once.
CREATE TABLE debits (
  app_id        uuid NOT NULL,
  reference     text NOT NULL,
  player_id     uuid NOT NULL,
  currency_id   uuid NOT NULL REFERENCES currencies (id),
  amount        numeric(20, 2) NOT NULL CHECK (amount > 0),
  balance_after numeric(20, 2),
  created_at    timestamptz NOT NULL DEFAULT now(),
  refunded_at   timestamptz,
  PRIMARY KEY (app_id, reference)
);

-- Down Migration
DROP TABLE debits;
DROP TABLE idempotency_keys;
DROP TABLE ledger;
DROP FUNCTION ledger_append_only();
DROP TABLE balances;
DROP TABLE currencies;
DROP TABLE apps;
