-- Up Migration
-- Apps (tenants) and their API keys, players, credentials, sessions, privacy and friends.

-- One game (tenant). `player_rules` is the `players` section of the app's current content.
CREATE TABLE apps (
  id              uuid PRIMARY KEY,
  name            text NOT NULL,
  is_demo         boolean NOT NULL DEFAULT false,
  player_rules    jsonb NOT NULL,
  content_version integer NOT NULL DEFAULT 1,
  created_at      timestamptz NOT NULL DEFAULT now()
);
-- At most one demo app, even if two replicas seed at once.
CREATE UNIQUE INDEX apps_one_demo ON apps (is_demo) WHERE is_demo;

-- Keys are stored as the sha256 of the key (high-entropy random keys need no slow hash).
CREATE TABLE api_keys (
  id         uuid PRIMARY KEY,
  app_id     uuid NOT NULL REFERENCES apps (id),
  kind       text NOT NULL CHECK (kind IN ('publishable', 'secret')),
  key_hash   text NOT NULL UNIQUE,
  created_at timestamptz NOT NULL DEFAULT now(),
  revoked_at timestamptz
);
CREATE INDEX api_keys_app ON api_keys (app_id);

-- ES256 signing keys generated when none is configured, shared by every replica.
CREATE TABLE signing_keys (
  kid         text PRIMARY KEY,
  private_pem text NOT NULL,
  public_pem  text NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE players (
  id               uuid PRIMARY KEY,
  app_id           uuid NOT NULL REFERENCES apps (id),
  email            text,
  password_hash    text,
  is_anonymous     boolean NOT NULL,
  privacy          text NOT NULL DEFAULT 'public' CHECK (privacy IN ('public', 'private', 'friends')),
  experience       bigint NOT NULL DEFAULT 0 CHECK (experience >= 0),
  starter_chest_id uuid NOT NULL,
  created_at       timestamptz NOT NULL DEFAULT now(),
  registered_at    timestamptz,
  CHECK (is_anonymous = (email IS NULL)),
  CHECK ((email IS NULL) = (password_hash IS NULL))
);
-- Emails are unique per app, whatever their case.
CREATE UNIQUE INDEX players_app_email ON players (app_id, lower(email)) WHERE email IS NOT NULL;
CREATE UNIQUE INDEX players_app_id ON players (app_id, id);

-- Opaque refresh tokens (stored hashed), rotated on every use. A family is one login's chain.
CREATE TABLE refresh_tokens (
  id          uuid PRIMARY KEY,
  app_id      uuid NOT NULL,
  player_id   uuid NOT NULL,
  family_id   uuid NOT NULL,
  token_hash  text NOT NULL UNIQUE,
  expires_at  timestamptz NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now(),
  rotated_at  timestamptz,
  revoked_at  timestamptz,
  FOREIGN KEY (app_id, player_id) REFERENCES players (app_id, id)
);
CREATE INDEX refresh_tokens_family ON refresh_tokens (family_id);
CREATE INDEX refresh_tokens_player ON refresh_tokens (app_id, player_id);

-- One row per direction: a friendship is confirmed when both directions exist.
CREATE TABLE friend_requests (
  app_id       uuid NOT NULL,
  requester_id uuid NOT NULL,
  addressee_id uuid NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (app_id, requester_id, addressee_id),
  CHECK (requester_id <> addressee_id),
  FOREIGN KEY (app_id, requester_id) REFERENCES players (app_id, id),
  FOREIGN KEY (app_id, addressee_id) REFERENCES players (app_id, id)
);
CREATE INDEX friend_requests_addressee ON friend_requests (app_id, addressee_id);

-- Down Migration
DROP TABLE friend_requests;
DROP TABLE refresh_tokens;
DROP TABLE players;
DROP TABLE signing_keys;
DROP TABLE api_keys;
DROP TABLE apps;
