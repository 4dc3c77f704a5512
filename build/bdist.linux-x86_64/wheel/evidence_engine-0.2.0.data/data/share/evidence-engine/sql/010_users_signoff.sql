-- The reviewer's desk (`evidence serve`): users with Argon2 password hashes, their API tokens and
-- browser sessions (both stored as SHA-256 of a random secret, never the secret), and a new kind of
-- trail record, 'signoff': an approval or rejection of an audit (or of one of its requirements),
-- appended like a note or a correction, pointing at the audit it signs (`amends`).

CREATE TABLE web_users (
    name          text PRIMARY KEY CHECK (name ~ '^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$'),
    role          text NOT NULL CHECK (role IN ('viewer', 'analyst', 'reviewer', 'admin')),
    password_hash text NOT NULL,                 -- Argon2id, PHC string ($argon2id$v=19$...)
    created_at    timestamptz NOT NULL DEFAULT now(),
    disabled      boolean NOT NULL DEFAULT false
);

CREATE TABLE web_tokens (
    token_sha256 text PRIMARY KEY,               -- SHA-256 of the bearer token (256 random bits)
    user_name    text NOT NULL REFERENCES web_users (name),
    created_at   timestamptz NOT NULL DEFAULT now(),
    last_used_at timestamptz
);
CREATE INDEX web_tokens_user ON web_tokens (user_name);

CREATE TABLE web_sessions (
    session_sha256 text PRIMARY KEY,             -- SHA-256 of the session cookie's value
    user_name      text NOT NULL REFERENCES web_users (name),
    csrf_token     text NOT NULL,
    created_at     timestamptz NOT NULL DEFAULT now(),
    expires_at     timestamptz NOT NULL
);
CREATE INDEX web_sessions_expiry ON web_sessions (expires_at);

-- A sign-off is a trail record of its own kind. DDL, not an UPDATE: the append-only triggers stay.
ALTER TABLE audits DROP CONSTRAINT IF EXISTS audits_kind_check;
ALTER TABLE audits ADD CONSTRAINT audits_kind_check CHECK (kind IN ('answer', 'note', 'correction', 'signoff'));
