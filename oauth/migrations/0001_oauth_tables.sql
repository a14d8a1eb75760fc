-- The OAuth server's records (spec: Resources and their fields), in schema oauth.
-- Extra columns beyond the spec are marked; docs/oauth.md explains each.

CREATE TABLE oauth_clients (
    id bigserial PRIMARY KEY,
    client_id text NOT NULL UNIQUE,
    client_secret_hash text,                      -- NULL: public client (PKCE only)
    name text NOT NULL,
    description text,
    icon_url text,
    redirect_uris text NOT NULL,                  -- JSON array of strings, as text
    allowed_scopes text NOT NULL,                 -- JSON array of strings, as text
    is_official boolean NOT NULL DEFAULT false,
    created_by bigint,
    created_at timestamptz NOT NULL DEFAULT now(),
    revoked_at timestamptz,
    -- extra: last change, and the per-client slow-down of failed authentications
    updated_at timestamptz,
    auth_failures integer NOT NULL DEFAULT 0,
    auth_failures_since timestamptz,
    auth_locked_until timestamptz
);

CREATE TABLE oauth_authorization_codes (
    code text PRIMARY KEY,                        -- SHA-256 hex of the code handed out
    client_id text NOT NULL,
    user_id bigint NOT NULL,
    redirect_uri text NOT NULL,
    code_challenge text NOT NULL,
    code_challenge_method text NOT NULL,
    scope text NOT NULL,
    expires_at timestamptz NOT NULL,
    used_at timestamptz,
    nonce text,
    auth_time integer,
    -- extra: the token chain the exchange started, burned if the code comes back
    chain_id text
);
CREATE INDEX oauth_authorization_codes_expires_at_idx ON oauth_authorization_codes (expires_at);

CREATE TABLE oauth_refresh_tokens (
    token_hash text PRIMARY KEY,                  -- SHA-256 hex; the plaintext is never stored
    client_id text NOT NULL,
    user_id bigint NOT NULL,
    scope text NOT NULL,
    parent_token_hash text,
    created_at timestamptz NOT NULL DEFAULT now(),
    expires_at timestamptz NOT NULL,
    revoked_at timestamptz,
    -- extra: the grant this token descends from (one code or device exchange),
    -- so a chain burns in one statement
    chain_id text NOT NULL,
    -- extra: the access token issued with this refresh token, denylisted with it
    access_jti text,
    access_expires_at timestamptz,
    revoked_reason text,
    -- extra: the successor pair, sealed, kept only for the refresh grace window
    successor_sealed text
);
-- One rotation per token, enforced by the database as well as by the rotation statement.
CREATE UNIQUE INDEX oauth_refresh_tokens_parent_idx
    ON oauth_refresh_tokens (parent_token_hash) WHERE parent_token_hash IS NOT NULL;
CREATE INDEX oauth_refresh_tokens_chain_idx ON oauth_refresh_tokens (chain_id);
CREATE INDEX oauth_refresh_tokens_client_idx ON oauth_refresh_tokens (client_id);
CREATE INDEX oauth_refresh_tokens_expires_at_idx ON oauth_refresh_tokens (expires_at);
CREATE INDEX oauth_refresh_tokens_sealed_idx
    ON oauth_refresh_tokens (revoked_at) WHERE successor_sealed IS NOT NULL;

CREATE TABLE oauth_device_codes (
    device_code text PRIMARY KEY,                 -- SHA-256 hex of the device code handed out
    user_code text NOT NULL UNIQUE,               -- normalized: 8 letters, no dash
    client_id text NOT NULL,
    scope text NOT NULL,
    user_id bigint,
    approved_at timestamptz,
    denied_at timestamptz,
    last_polled_at timestamptz,
    expires_at timestamptz NOT NULL,
    -- extra: the polling interval, grown by slow_down (RFC 8628 3.5)
    poll_interval integer NOT NULL DEFAULT 5,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX oauth_device_codes_expires_at_idx ON oauth_device_codes (expires_at);

-- Not in the spec: revoked access tokens by jti, until they would have expired.
CREATE TABLE oauth_revoked_access_tokens (
    jti text PRIMARY KEY,
    client_id text NOT NULL,
    revoked_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL
);
CREATE INDEX oauth_revoked_access_tokens_expires_at_idx ON oauth_revoked_access_tokens (expires_at);
