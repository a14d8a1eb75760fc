-- Webmail sessions (svc_webmail): stored like the panel's, so logout, a
-- password change and a recovery reset end them on the next request. The
-- identity is the mailbox, not a panel account (spec, Authentication 3).

CREATE TABLE webmail_sessions (
    id            uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
    address_id    uuid        NOT NULL REFERENCES addresses (id) ON DELETE CASCADE,
    -- SHA-256 hex of the svc_webmail cookie value; the value itself is never stored.
    token_hash    text        NOT NULL UNIQUE,
    ip            text        NOT NULL DEFAULT '',
    user_agent    text        NOT NULL DEFAULT '',
    created_at    timestamptz NOT NULL,
    last_seen_at  timestamptz NOT NULL,
    expires_at    timestamptz NOT NULL
);
CREATE INDEX webmail_sessions_address ON webmail_sessions (address_id);
CREATE INDEX webmail_sessions_expires ON webmail_sessions (expires_at);
