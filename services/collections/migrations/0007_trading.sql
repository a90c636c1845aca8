-- Up Migration
-- Trading between players (docs/content.md, "Trading"; docs/architecture.md, "The trade saga").

-- The trading rules of the app's current content version (null: no trading).
ALTER TABLE apps ADD COLUMN trading jsonb;

-- One row per dissolve: its key (the client's Idempotency-Key, or the gateway's retry key) admits
-- one dissolve per player, and the row keeps the answer for a repeat.
CREATE TABLE dissolves (
  app_id         uuid NOT NULL,
  player_id      uuid NOT NULL,
  key            text NOT NULL,
  id             uuid NOT NULL UNIQUE,
  collectible_id text NOT NULL,
  quantity       integer NOT NULL CHECK (quantity > 0),
  currency       text NOT NULL,
  amount         integer NOT NULL CHECK (amount >= 0),
  copies_left    integer NOT NULL CHECK (copies_left >= 0),
  created_at     timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (app_id, player_id, key)
);

-- A player's trade stamina and offers of the day. The row is locked by every offer of the player
-- (and by the end of one of their trades), so stamina and the daily cap are spent exactly.
-- `stamina` was the value at `stamina_at`; one point comes back every regen_hours after it.
CREATE TABLE trade_players (
  app_id       uuid NOT NULL,
  player_id    uuid NOT NULL,
  stamina      integer NOT NULL CHECK (stamina >= 0),
  stamina_at   timestamptz NOT NULL,
  offers_day   date NOT NULL,
  offers_today integer NOT NULL CHECK (offers_today >= 0),
  PRIMARY KEY (app_id, player_id)
);

-- One row per trade. States: offering (escrow taken, the offer's tokens being debited), offered,
-- accepting (the partner's copy taken, their tokens being debited), then exactly one of
-- completed, declined, cancelled, expired, or failed (the offer's debit was refused or lost).
-- While the state is offering, offered or accepting, the offerer's copy of `give_id` is held here
-- and counted in no player's collection; while accepting, the partner's copy of `want_id` too.
CREATE TABLE trades (
  id               uuid PRIMARY KEY,
  app_id           uuid NOT NULL,
  offerer_id       uuid NOT NULL,
  partner_id       uuid NOT NULL,
  give_id          text NOT NULL,
  want_id          text NOT NULL,
  give_rarity      text NOT NULL,
  want_rarity      text NOT NULL,
  token_currency   text,
  give_cost        integer NOT NULL CHECK (give_cost >= 0),
  want_cost        integer NOT NULL CHECK (want_cost >= 0),
  -- Whether the offer spent a stamina point (content with stamina): returned once if it does not complete.
  stamina_spent    boolean NOT NULL,
  state            text NOT NULL CHECK (state IN ('offering', 'offered', 'accepting', 'completed', 'declined', 'cancelled', 'expired', 'failed')),
  -- Accepts tried so far: each one's debit has its own wallet reference (trade:<id>:accept:<n>).
  accept_attempt   integer NOT NULL DEFAULT 0,
  created_at       timestamptz NOT NULL DEFAULT now(),
  expires_at       timestamptz NOT NULL,
  state_at         timestamptz NOT NULL DEFAULT now(),
  ended_at         timestamptz,
  CHECK (offerer_id <> partner_id)
);
-- At most one open offer per pair of players and collectible.
CREATE UNIQUE INDEX trades_one_open ON trades (app_id, offerer_id, partner_id, give_id) WHERE state IN ('offering', 'offered', 'accepting');
CREATE INDEX trades_offerer ON trades (app_id, offerer_id, created_at DESC);
CREATE INDEX trades_partner ON trades (app_id, partner_id, created_at DESC);
-- The sweeper's work: open offers by expiry, steps left mid-way by age.
CREATE INDEX trades_open ON trades (expires_at) WHERE state = 'offered';
CREATE INDEX trades_mid_step ON trades (state_at) WHERE state IN ('offering', 'accepting');

-- Token debits of trades that must go back (an offer that did not complete, an accept given up):
-- written in the transaction that decided it, refunded by reference (the wallet refunds a
-- reference once, and voids one it never debited), then marked done; the sweeper retries the rest.
CREATE TABLE trade_refunds (
  reference  text PRIMARY KEY,
  app_id     uuid NOT NULL,
  trade_id   uuid NOT NULL REFERENCES trades (id),
  created_at timestamptz NOT NULL DEFAULT now(),
  done_at    timestamptz
);
CREATE INDEX trade_refunds_due ON trade_refunds (created_at) WHERE done_at IS NULL;

-- Every step of every trade, who took it and when (the trades' audit log).
CREATE TABLE trade_log (
  trade_id   uuid NOT NULL REFERENCES trades (id),
  at         timestamptz NOT NULL DEFAULT clock_timestamp(),
  actor      text NOT NULL,
  action     text NOT NULL,
  state      text NOT NULL
);
CREATE INDEX trade_log_trade ON trade_log (trade_id, at);

-- Down Migration
DROP TABLE trade_log;
DROP TABLE trade_refunds;
DROP TABLE trades;
DROP TABLE trade_players;
DROP TABLE dissolves;
ALTER TABLE apps DROP COLUMN trading;
