-- Social publishing (issue 27): network apps, connected accounts, posts and
-- their per-account targets. Secrets and tokens are sealed (common/crypto.py
-- Sealer, purpose content.social); nothing here is readable without SECRET.

-- One row per network an admin registered an app for. SOCIAL_OAUTH_<NETWORK>_*
-- is the fallback for a network with no row.
CREATE TABLE social_apps (
    network        text        PRIMARY KEY,
    client_id      text        NOT NULL DEFAULT '',
    secret_sealed  text,
    secret_last4   text        NOT NULL DEFAULT '',
    enabled        boolean     NOT NULL DEFAULT true,
    -- Endpoint overrides: {authorize, token, api, upload}: a local server in tests.
    endpoints      jsonb       NOT NULL DEFAULT '{}'::jsonb,
    updated_at     timestamptz NOT NULL
);

-- Mastodon registers one app per instance (POST /api/v1/apps), kept once.
CREATE TABLE social_instances (
    network        text        NOT NULL,
    instance       text        NOT NULL,
    client_id      text        NOT NULL,
    secret_sealed  text        NOT NULL,
    created_at     timestamptz NOT NULL,
    PRIMARY KEY (network, instance)
);

CREATE TABLE social_accounts (
    id             text        PRIMARY KEY,
    network        text        NOT NULL,
    remote_id      text        NOT NULL,
    handle         text        NOT NULL,
    name           text        NOT NULL DEFAULT '',
    -- The API base this account talks to (a Mastodon instance, a Bluesky PDS).
    base_url       text        NOT NULL DEFAULT '',
    -- What a network needs beyond the id (Pinterest: the board pins go to).
    options        jsonb       NOT NULL DEFAULT '{}'::jsonb,
    -- Sealed JSON: {access, refresh}; expires_at is the access token's.
    tokens_sealed  text        NOT NULL,
    expires_at     timestamptz,
    -- Why the connection needs an admin (the network's own words), or null.
    attention      text,
    attention_at   timestamptz,
    connected_by   text,
    created_at     timestamptz NOT NULL,
    updated_at     timestamptz NOT NULL
);
CREATE UNIQUE INDEX social_accounts_remote ON social_accounts (network, remote_id);

-- A consent in flight: state (hashed), its PKCE verifier (sealed) and the
-- session that asked; single use, ten minutes.
CREATE TABLE social_oauth_states (
    state_hash       text        PRIMARY KEY,
    network          text        NOT NULL,
    session_id       bigint      NOT NULL,
    user_id          text        NOT NULL,
    verifier_sealed  text        NOT NULL,
    instance         text        NOT NULL DEFAULT '',
    return_to        text        NOT NULL,
    expires_at       timestamptz NOT NULL
);

CREATE TABLE social_posts (
    id            text        PRIMARY KEY,
    text          text        NOT NULL,
    link          text,
    media         text[]      NOT NULL DEFAULT '{}',
    -- The roll-up of the targets (content/social/rollup.py), never set directly.
    status        text        NOT NULL DEFAULT 'draft',
    scheduled_at  timestamptz,
    author_id     text,
    sent_at       timestamptz,
    created_at    timestamptz NOT NULL,
    updated_at    timestamptz NOT NULL,
    deleted_at    timestamptz
);
CREATE INDEX social_posts_status ON social_posts (status, created_at DESC) WHERE deleted_at IS NULL;
CREATE INDEX social_posts_scheduled ON social_posts (scheduled_at) WHERE deleted_at IS NULL AND scheduled_at IS NOT NULL;

CREATE TABLE social_targets (
    id               text        PRIMARY KEY,
    post_id          text        NOT NULL REFERENCES social_posts (id) ON DELETE CASCADE,
    -- Null once the account is disconnected: the outcome stays, naming the handle.
    account_id       text        REFERENCES social_accounts (id) ON DELETE SET NULL,
    network          text        NOT NULL,
    handle           text        NOT NULL,
    -- The copy sent (kept once posted; PUT rewrites the others).
    text             text        NOT NULL,
    link             text,
    media            text[]      NOT NULL DEFAULT '{}',
    -- pending, queued, sending, retrying, processing, posted, failed
    status           text        NOT NULL DEFAULT 'pending',
    -- reconnect, retry or content: what kind of failure the last one was.
    error_kind       text,
    error            text,
    attempts         integer     NOT NULL DEFAULT 0,
    next_attempt_at  timestamptz,
    job_key          text,
    remote_id        text,
    remote_url       text,
    -- What a network that confirms later needs to be asked again (a container id).
    processing       jsonb,
    -- Sent as Idempotency-Key where the network takes one; the same on every try.
    idempotency_key  text        NOT NULL,
    posted_at        timestamptz,
    updated_at       timestamptz NOT NULL,
    UNIQUE (post_id, account_id)
);
CREATE INDEX social_targets_account ON social_targets (account_id);
