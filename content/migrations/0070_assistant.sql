-- The assistant (issue 28): the one connected model provider, its OAuth
-- consents, conversations kept per person, the usage meter and its limits,
-- and the visitor bubble's settings. Credentials and tokens are sealed
-- (common/crypto.py Sealer, purpose content.assistant); only a hint is shown.

-- At most one provider is connected: the row with id 1.
CREATE TABLE assistant_provider (
    id              smallint    PRIMARY KEY DEFAULT 1 CHECK (id = 1),
    kind            text        NOT NULL,
    model           text        NOT NULL,
    base_url        text        NOT NULL DEFAULT '',
    -- 'api_key', 'oauth' or 'none' (the local runtime).
    auth            text        NOT NULL,
    -- Sealed API key, or sealed JSON {access, refresh} for OAuth.
    secret_sealed   text,
    secret_hint     text        NOT NULL DEFAULT '',
    expires_at      timestamptz,
    -- The last connection test: null until one ran.
    tested_at       timestamptz,
    test_ok         boolean,
    test_problem    text,
    connected_by    text        REFERENCES users (id) ON DELETE SET NULL,
    created_at      timestamptz NOT NULL,
    updated_at      timestamptz NOT NULL
);

-- An OAuth consent in flight: state (hashed), its PKCE verifier (sealed) and
-- the provider settings to keep once tokens arrive; single use, ten minutes.
CREATE TABLE assistant_oauth_states (
    state_hash       text        PRIMARY KEY,
    user_id          text        NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    kind             text        NOT NULL,
    model            text        NOT NULL,
    base_url         text        NOT NULL DEFAULT '',
    verifier_sealed  text        NOT NULL,
    expires_at       timestamptz NOT NULL
);

CREATE TABLE assistant_conversations (
    id          text        PRIMARY KEY,
    user_id     text        NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    title       text        NOT NULL DEFAULT '',
    created_at  timestamptz NOT NULL,
    updated_at  timestamptz NOT NULL
);
CREATE INDEX assistant_conversations_user ON assistant_conversations (user_id, updated_at DESC);

-- Each turn as the chat loop keeps it: role user, assistant (text and its
-- tool calls), or tool (one call's result); content is provider-neutral JSON.
CREATE TABLE assistant_messages (
    id               bigserial   PRIMARY KEY,
    conversation_id  text        NOT NULL REFERENCES assistant_conversations (id) ON DELETE CASCADE,
    role             text        NOT NULL CHECK (role IN ('user', 'assistant', 'tool')),
    content          jsonb       NOT NULL,
    created_at       timestamptz NOT NULL
);
CREATE INDEX assistant_messages_conversation ON assistant_messages (conversation_id, id);

-- Tokens spent, per person (user_id null: the visitor bubble) per UTC month,
-- as the provider reported them.
CREATE TABLE assistant_usage (
    month       date        NOT NULL,
    user_id     text        NOT NULL DEFAULT '',
    tokens_in   bigint      NOT NULL DEFAULT 0,
    tokens_out  bigint      NOT NULL DEFAULT 0,
    requests    integer     NOT NULL DEFAULT 0,
    PRIMARY KEY (month, user_id)
);

-- One row of settings: monthly token limits (null: none) and the bubble.
CREATE TABLE assistant_settings (
    id                  smallint    PRIMARY KEY DEFAULT 1 CHECK (id = 1),
    person_monthly      bigint,
    site_monthly        bigint,
    bubble_enabled      boolean     NOT NULL DEFAULT false,
    bubble_origins      text[]      NOT NULL DEFAULT '{}',
    -- Types public-ask answers from (the ask route uses its key's scopes).
    bubble_types        text[]      NOT NULL DEFAULT '{}',
    -- Questions per minute per IP on public-ask.
    bubble_rate         integer     NOT NULL DEFAULT 10,
    updated_at          timestamptz NOT NULL
);

-- The bubble's retrieval: full text over published, live entries only
-- (title weighted above the string values of data), 'simple' so every
-- locale is searched the same way.
CREATE INDEX entries_assistant_search ON entries USING gin (
    (setweight(to_tsvector('simple', title), 'A')
     || setweight(jsonb_to_tsvector('simple', data, '["string"]'), 'B'))
) WHERE deleted_at IS NULL AND status = 'published';
