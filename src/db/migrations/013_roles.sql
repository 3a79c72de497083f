-- 013: users and roles of the company console.
--
-- 1. Every console user has a role: `owner` (everything), `developer` (credentials and webhooks; the rest
--    read-only) or `marketer` (automations, campaigns, segments, contacts, sends; no credentials). What a
--    role may do is decided in code (src/console/permissions.ts); the database only keeps the name.
--    Users that exist already were made by the operator's invitations and become owners. New rows must
--    name their role (no default after this migration).
ALTER TABLE console_users ADD COLUMN role text NOT NULL DEFAULT 'owner'
  CHECK (role IN ('owner', 'developer', 'marketer'));
ALTER TABLE console_users ALTER COLUMN role DROP DEFAULT;

-- 2. An invitation carries the role the person gets on accepting it; pending invitations of the operator
--    were for owners. `invited_by` is the audit actor who made it (`admin` or `console:<email>`).
ALTER TABLE console_invitations ADD COLUMN role text NOT NULL DEFAULT 'owner'
  CHECK (role IN ('owner', 'developer', 'marketer'));
ALTER TABLE console_invitations ALTER COLUMN role DROP DEFAULT;
ALTER TABLE console_invitations ADD COLUMN invited_by text NOT NULL DEFAULT 'admin';
ALTER TABLE console_invitations ALTER COLUMN invited_by DROP DEFAULT;

-- 3. One-time password reset links made by an owner (console) or the operator (`cms user reset-link`).
--    Like invitations, only the SHA-256 of the token is stored; a link is valid until `expires_at`
--    (one hour), used once (`used_at`), and a newer link for the same user supersedes it (`revoked_at`).
--    Removing the user removes its links.
CREATE TABLE console_password_resets (
  reset_id    serial PRIMARY KEY,
  user_id     integer     NOT NULL REFERENCES console_users ON DELETE CASCADE,
  token_hash  bytea       NOT NULL UNIQUE,
  created_by  text        NOT NULL,
  created_at  timestamptz NOT NULL,
  expires_at  timestamptz NOT NULL,
  used_at     timestamptz,
  revoked_at  timestamptz
);
CREATE INDEX console_password_resets_user ON console_password_resets (user_id);

