-- Panel accounts, their one-time tokens and their stored sessions.
-- Everything an account owns references accounts(id) ON DELETE CASCADE, so
-- deleting the row removes it all in one statement.

CREATE TABLE accounts (
    id                   uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
    -- Stored normalised and lower-cased (mail/accounts/service.py).
    email                text        NOT NULL,
    name                 text        NOT NULL DEFAULT '' CHECK (length(name) <= 100),
    password_hash        text        NOT NULL,
    email_verified_at    timestamptz,
    -- The first account owns the instance; at most one row may say so.
    is_owner             boolean     NOT NULL DEFAULT false,
    -- TOTP secrets are sealed (common.crypto.Sealer, purpose mail.totp).
    totp_secret          text,
    totp_pending_secret  text,
    totp_enabled_at      timestamptz,
    -- The last accepted TOTP time step: a code is never accepted twice.
    totp_last_step       bigint      NOT NULL DEFAULT 0,
    notifications        jsonb       NOT NULL DEFAULT '{}'::jsonb,
    referral_code        text        NOT NULL,
    referred_by          uuid        REFERENCES accounts (id) ON DELETE SET NULL,
    created_at           timestamptz NOT NULL,
    updated_at           timestamptz NOT NULL,
    CONSTRAINT accounts_email_key UNIQUE (email),
    CONSTRAINT accounts_referral_code_key UNIQUE (referral_code)
);
CREATE UNIQUE INDEX accounts_one_owner ON accounts (is_owner) WHERE is_owner;
CREATE INDEX accounts_referred_by ON accounts (referred_by) WHERE referred_by IS NOT NULL;

-- Verification and reset tokens: only the SHA-256 hex of the token is kept.
CREATE TABLE account_tokens (
    id           uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
    account_id   uuid        NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    kind         text        NOT NULL CHECK (kind IN ('verify_email', 'password_reset')),
    token_hash   text        NOT NULL UNIQUE,
    -- verify_email: {"email": ...} the address being verified (an email change).
    data         jsonb       NOT NULL DEFAULT '{}'::jsonb,
    created_at   timestamptz NOT NULL,
    expires_at   timestamptz NOT NULL,
    used_at      timestamptz
);
CREATE INDEX account_tokens_account ON account_tokens (account_id, kind);
CREATE INDEX account_tokens_expires ON account_tokens (expires_at);

CREATE TABLE sessions (
    id            uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
    account_id    uuid        NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    -- SHA-256 hex of the svc_session cookie value; the value itself is never stored.
    token_hash    text        NOT NULL UNIQUE,
    ip            text        NOT NULL DEFAULT '',
    user_agent    text        NOT NULL DEFAULT '',
    created_at    timestamptz NOT NULL,
    last_seen_at  timestamptz NOT NULL,
    expires_at    timestamptz NOT NULL
);
CREATE INDEX sessions_account ON sessions (account_id);
CREATE INDEX sessions_expires ON sessions (expires_at);
