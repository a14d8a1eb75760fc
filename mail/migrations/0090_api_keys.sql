-- API keys of the sending API (mail/apikeys/). The token is shown once, at
-- creation: the table keeps its public lookup part and the SHA-256 hex of the
-- whole token, compared in constant time (mail/apikeys/service.py).
CREATE TABLE api_keys (
    id            uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
    account_id    uuid        NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    name          text        NOT NULL CHECK (length(name) BETWEEN 1 AND 50),
    -- Resend's permission names: full_access reaches every route a session
    -- does except keys and suppressions; sending_access only sends.
    permission    text        NOT NULL CHECK (permission IN ('full_access', 'sending_access')),
    -- A sending key may be held to one domain. Deleting the domain deletes the
    -- key: SET NULL would silently widen it to every domain.
    domain_id     uuid        REFERENCES domains (id) ON DELETE CASCADE,
    -- The token is re_<lookup>_<secret>; lookup finds the row, the hash proves it.
    lookup        text        NOT NULL,
    token_hash    text        NOT NULL,
    created_at    timestamptz NOT NULL,
    last_used_at  timestamptz,
    CONSTRAINT api_keys_lookup_key UNIQUE (lookup),
    CONSTRAINT api_keys_domain_sending CHECK (domain_id IS NULL OR permission = 'sending_access')
);
CREATE INDEX api_keys_account ON api_keys (account_id, created_at DESC, id DESC);
