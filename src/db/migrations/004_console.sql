-- 004: the company console: company users, one-time invitations, sessions, sign-in throttling.
-- Tokens (invitation links, session cookies) are random and stored only as their SHA-256, like API keys:
-- a copy of the database does not let anyone sign in. Sessions live here so every process sees them.

-- A person who belongs to one company. `email` is stored lowercased and is unique across companies, so
-- signing in needs only the email. `password_hash` is an argon2id PHC string.
CREATE TABLE console_users (
  user_id             serial PRIMARY KEY,
  company_id          integer     NOT NULL REFERENCES companies ON DELETE CASCADE,
  email               text        NOT NULL UNIQUE,
  password_hash       text        NOT NULL,
  created_at          timestamptz NOT NULL DEFAULT now(),
  password_changed_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX console_users_company ON console_users (company_id);

-- An operator's invitation: a one-time link valid until `expires_at`, used once (`accepted_at`), or
-- superseded by a newer invitation for the same email (`revoked_at`).
CREATE TABLE console_invitations (
  invitation_id serial PRIMARY KEY,
  company_id    integer     NOT NULL REFERENCES companies ON DELETE CASCADE,
  email         text        NOT NULL,
  token_hash    bytea       NOT NULL UNIQUE,
  created_at    timestamptz NOT NULL DEFAULT now(),
  expires_at    timestamptz NOT NULL,
  accepted_at   timestamptz,
  revoked_at    timestamptz
);
CREATE INDEX console_invitations_company_email ON console_invitations (company_id, email);

-- A signed-in browser. Valid while now < expires_at; each request moves expires_at to
-- min(created_at + absolute lifetime, now + idle lifetime).
CREATE TABLE console_sessions (
  session_hash bytea       PRIMARY KEY,
  user_id      integer     NOT NULL REFERENCES console_users ON DELETE CASCADE,
  created_at   timestamptz NOT NULL,
  last_seen_at timestamptz NOT NULL,
  expires_at   timestamptz NOT NULL
);
CREATE INDEX console_sessions_user ON console_sessions (user_id);

-- Failed sign-in attempts per bucket (an email, a client address) in a fixed window starting at the
-- first failure; shared by every process on one database.
CREATE TABLE console_login_failures (
  bucket       text        PRIMARY KEY,
  failures     integer     NOT NULL,
  window_start timestamptz NOT NULL
);

-- Secrets the console generates once per installation (the cookie-signing key), shared by every process.
CREATE TABLE console_secrets (
  name  text PRIMARY KEY,
  value text NOT NULL
);

-- Sends › search by phone: a company's messages to one number.
CREATE INDEX messages_company_phone ON messages (company_id, phone);
