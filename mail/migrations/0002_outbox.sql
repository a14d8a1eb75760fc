-- Mail the panel itself sends (verification, reset, security notices), kept
-- as full MIME messages until the MTA delivers them.
CREATE TABLE outbox (
    id          uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
    -- Kept when the account is deleted: its farewell notice is still owed.
    account_id  uuid        REFERENCES accounts (id) ON DELETE SET NULL,
    kind        text        NOT NULL,
    mail_from   text        NOT NULL,
    rcpt_to     text        NOT NULL,
    subject     text        NOT NULL,
    message     bytea       NOT NULL,
    created_at  timestamptz NOT NULL,
    attempts    integer     NOT NULL DEFAULT 0,
    last_error  text,
    sent_at     timestamptz
);
CREATE INDEX outbox_unsent ON outbox (created_at) WHERE sent_at IS NULL;
CREATE INDEX outbox_account ON outbox (account_id);
