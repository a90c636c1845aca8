-- Up Migration
-- One table for every debit the chests service makes of the wallet (docs/architecture.md, "Saga 3:
-- payments"): purchases, keys and timer skips, run by one saga runner and settled by one sweeper.
-- The rows of `purchases` and `chest_debits` move here in every state, so a saga a deploy
-- interrupted is settled by the new sweeper; the wallet references stay as they were (a purchase:
-- its id; a key: key:<id>; a skip: unlock:<id>).
--
-- One machine for every kind: pending (recorded, the wallet not answered yet) → debited → completed
-- (in the effect's transaction); a refusal → failed; pending/debited → compensating → refunded (or
-- failed when nothing had been debited). A chest debit's former `refunding` is `compensating`.
CREATE TABLE payments (
  id              uuid PRIMARY KEY,
  kind            text NOT NULL CHECK (kind IN ('purchase', 'key', 'skip')),
  app_id          uuid NOT NULL,
  player_id       uuid NOT NULL,
  currency        text NOT NULL,
  amount          numeric(20, 2) NOT NULL CHECK (amount > 0),
  status          text NOT NULL CHECK (status IN ('pending', 'debited', 'completed', 'compensating', 'refunded', 'failed')),
  failure         text,
  -- Purchases: what was bought, the client's Idempotency-Key and the answer kept for its retries.
  chest_type_id   uuid,
  quantity        integer CHECK (quantity BETWEEN 1 AND 10),
  idempotency_key text,
  answer          jsonb,
  -- Keys and skips: the chest whose use is paid for.
  chest_id        uuid,
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT payments_purchase_columns CHECK (
    CASE WHEN kind = 'purchase' THEN chest_type_id IS NOT NULL AND quantity IS NOT NULL AND chest_id IS NULL
         ELSE chest_id IS NOT NULL AND chest_type_id IS NULL AND quantity IS NULL AND idempotency_key IS NULL AND answer IS NULL END),
  FOREIGN KEY (app_id, chest_type_id) REFERENCES chest_types (app_id, id)
);

INSERT INTO payments (id, kind, app_id, player_id, currency, amount, status, failure, chest_type_id, quantity, idempotency_key, answer, created_at, updated_at)
SELECT id, 'purchase', app_id, player_id, currency, amount, status, failure, chest_type_id, quantity, idempotency_key, answer, created_at, updated_at
  FROM purchases;
INSERT INTO payments (id, kind, app_id, player_id, currency, amount, status, chest_id, created_at, updated_at)
SELECT id, CASE purpose WHEN 'key' THEN 'key' ELSE 'skip' END, app_id, player_id, currency, amount,
       CASE status WHEN 'refunding' THEN 'compensating' ELSE status END, chest_id, created_at, updated_at
  FROM chest_debits;

-- The uniqueness the two tables kept: an Idempotency-Key buys once per player (released by a
-- failed or refunded purchase), and one timer skip of a chest is paid at a time (0011), now also
-- while its debit is `debited`.
CREATE UNIQUE INDEX payments_idempotency ON payments (app_id, player_id, idempotency_key) WHERE idempotency_key IS NOT NULL;
CREATE UNIQUE INDEX payments_one_skip ON payments (app_id, chest_id) WHERE kind = 'skip' AND status IN ('pending', 'debited', 'completed');
-- What the sweeper looks for; what the admin overview counts.
CREATE INDEX payments_unsettled ON payments (updated_at) WHERE status IN ('pending', 'debited', 'compensating');
CREATE INDEX payments_app_kind ON payments (app_id, kind, status, created_at);

-- A purchased chest names its purchase, now a payment.
ALTER TABLE inventory_chests DROP CONSTRAINT inventory_chests_purchase_id_fkey;
ALTER TABLE inventory_chests ADD CONSTRAINT inventory_chests_purchase_id_fkey FOREIGN KEY (purchase_id) REFERENCES payments (id);

DROP TABLE purchases;
DROP TABLE chest_debits;

-- Down Migration
CREATE TABLE purchases (
  id            uuid PRIMARY KEY,
  app_id        uuid NOT NULL,
  player_id     uuid NOT NULL,
  chest_type_id uuid NOT NULL,
  currency      text NOT NULL,
  quantity      integer NOT NULL CHECK (quantity BETWEEN 1 AND 10),
  amount        numeric(20, 2) NOT NULL CHECK (amount > 0),
  status        text NOT NULL CHECK (status IN ('pending', 'debited', 'completed', 'compensating', 'refunded', 'failed')),
  failure       text,
  created_at    timestamptz NOT NULL DEFAULT now(),
  updated_at    timestamptz NOT NULL DEFAULT now(),
  idempotency_key text,
  answer        jsonb,
  FOREIGN KEY (app_id, chest_type_id) REFERENCES chest_types (app_id, id)
);
CREATE INDEX purchases_unsettled ON purchases (updated_at) WHERE status IN ('pending', 'debited', 'compensating');
CREATE UNIQUE INDEX purchases_idempotency ON purchases (app_id, player_id, idempotency_key) WHERE idempotency_key IS NOT NULL;
INSERT INTO purchases (id, app_id, player_id, chest_type_id, currency, quantity, amount, status, failure, created_at, updated_at, idempotency_key, answer)
SELECT id, app_id, player_id, chest_type_id, currency, quantity, amount, status, failure, created_at, updated_at, idempotency_key, answer
  FROM payments WHERE kind = 'purchase';

CREATE TABLE chest_debits (
  id         uuid PRIMARY KEY,
  app_id     uuid NOT NULL,
  player_id  uuid NOT NULL,
  chest_id   uuid NOT NULL,
  currency   text NOT NULL,
  amount     integer NOT NULL CHECK (amount > 0),
  status     text NOT NULL CHECK (status IN ('pending', 'completed', 'refunding', 'refunded')),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  purpose    text NOT NULL DEFAULT 'key' CHECK (purpose IN ('key', 'unlock_skip'))
);
CREATE INDEX chest_debits_unsettled ON chest_debits (updated_at) WHERE status IN ('pending', 'refunding');
-- debited → pending (the old sweeper refunds it); compensating → refunding; failed → refunded (nothing was kept).
INSERT INTO chest_debits (id, app_id, player_id, chest_id, currency, amount, status, created_at, updated_at, purpose)
SELECT id, app_id, player_id, chest_id, currency, amount,
       CASE status WHEN 'debited' THEN 'pending' WHEN 'compensating' THEN 'refunding' WHEN 'failed' THEN 'refunded' ELSE status END,
       created_at, updated_at, CASE kind WHEN 'key' THEN 'key' ELSE 'unlock_skip' END
  FROM payments WHERE kind IN ('key', 'skip');
CREATE UNIQUE INDEX chest_debits_one_skip ON chest_debits (app_id, chest_id) WHERE purpose = 'unlock_skip' AND status IN ('pending', 'completed');

ALTER TABLE inventory_chests DROP CONSTRAINT inventory_chests_purchase_id_fkey;
ALTER TABLE inventory_chests ADD CONSTRAINT inventory_chests_purchase_id_fkey FOREIGN KEY (purchase_id) REFERENCES purchases (id);
DROP TABLE payments;
