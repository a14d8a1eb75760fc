-- The sending API's record of each email (mail/sending/): what the caller
-- asked for, as GET /api/emails/:id answers it. The message itself (raw MIME,
-- recipients, attempts, status) is the outbound queue's, in mta; the id is the
-- same on both sides.
CREATE TABLE sent_emails (
    id            uuid        PRIMARY KEY,
    account_id    uuid        NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    -- The key that sent it; a revoked key leaves its mail behind.
    api_key_id    uuid        REFERENCES api_keys (id) ON DELETE SET NULL,
    from_address  text        NOT NULL,
    to_addresses  text[]      NOT NULL,
    cc            text[]      NOT NULL DEFAULT '{}',
    bcc           text[]      NOT NULL DEFAULT '{}',
    reply_to      text[]      NOT NULL DEFAULT '{}',
    subject       text        NOT NULL,
    html          text,
    text          text,
    -- [{name, value}], as sent.
    tags          jsonb       NOT NULL DEFAULT '[]'::jsonb,
    -- {name: value}: the custom header fields, as sent.
    headers       jsonb       NOT NULL DEFAULT '{}'::jsonb,
    -- [{filename, content_type, size}]: what was attached, not the bytes (they
    -- are in the queued message).
    attachments   jsonb       NOT NULL DEFAULT '[]'::jsonb,
    message_id    text        NOT NULL,
    scheduled_at  timestamptz,
    created_at    timestamptz NOT NULL
);
-- GET /api/emails: newest first, keyset pages by (created_at, id).
CREATE INDEX sent_emails_account ON sent_emails (account_id, created_at DESC, id DESC);

-- Idempotency-Key (Resend's header) per account, kept 24 hours: the request's
-- fingerprint and the answer it got, written in the transaction that sent.
CREATE TABLE idempotency_keys (
    account_id    uuid        NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    key           text        NOT NULL CHECK (length(key) BETWEEN 1 AND 256),
    -- Which route and the SHA-256 of the canonical JSON body.
    fingerprint   text        NOT NULL,
    response      jsonb       NOT NULL,
    created_at    timestamptz NOT NULL,
    PRIMARY KEY (account_id, key)
);
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);
