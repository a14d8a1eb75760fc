-- Mail transfers: imports from another IMAP server into an address (mail/transfers/).
--
-- States: queued -> running -> completed | failed | cancelled (the last three
-- are terminal). The source password is sealed with
-- common.crypto.Sealer(SECRET, "mail.transfers") and erased in the statement
-- that reaches a terminal state; the CHECK below makes a terminal row that
-- still holds it impossible.

CREATE TABLE transfers (
    id               uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
    account_id       uuid        NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    address_id       uuid        NOT NULL REFERENCES addresses (id) ON DELETE CASCADE,
    host             text        NOT NULL CHECK (length(host) BETWEEN 1 AND 253),
    port             integer     NOT NULL CHECK (port BETWEEN 1 AND 65535),
    tls              text        NOT NULL CHECK (tls IN ('implicit', 'starttls', 'none')),
    username         text        NOT NULL CHECK (length(username) BETWEEN 1 AND 320),
    password_sealed  text,
    state            text        NOT NULL DEFAULT 'queued'
                                 CHECK (state IN ('queued', 'running', 'completed', 'failed', 'cancelled')),
    error            text,
    -- Progress, written with each imported message in its transaction.
    folders_total    integer     NOT NULL DEFAULT 0,
    folders_done     integer     NOT NULL DEFAULT 0,
    messages_total   integer     NOT NULL DEFAULT 0,
    messages_done    integer     NOT NULL DEFAULT 0,
    -- Of messages_done: already in the destination (Message-ID and size), not stored again.
    duplicates       integer     NOT NULL DEFAULT 0,
    bytes_total      bigint      NOT NULL DEFAULT 0,
    bytes_done       bigint      NOT NULL DEFAULT 0,
    current_folder   text,
    errors           integer     NOT NULL DEFAULT 0,
    -- The last few per-message errors, newest last (bounded by the code).
    recent_errors    jsonb       NOT NULL DEFAULT '[]'::jsonb,
    -- The process running it, and when it last said so: a row whose heartbeat
    -- is older than the stale limit is taken over (its process died).
    worker           text,
    heartbeat_at     timestamptz,
    created_at       timestamptz NOT NULL,
    started_at       timestamptz,
    finished_at      timestamptz,
    updated_at       timestamptz NOT NULL,
    CONSTRAINT transfers_password_erased
        CHECK (state IN ('queued', 'running') OR password_sealed IS NULL)
);
-- One transfer per destination at a time (409 conflict).
CREATE UNIQUE INDEX transfers_one_active ON transfers (address_id)
    WHERE state IN ('queued', 'running');
CREATE INDEX transfers_account ON transfers (account_id, created_at DESC, id DESC);
-- The runner's claim: active rows only.
CREATE INDEX transfers_active ON transfers (created_at) WHERE state IN ('queued', 'running');

-- Per source folder: where it goes and how far it got. UIDVALIDITY and the
-- last imported UID are what a restarted transfer resumes from.
CREATE TABLE transfer_folders (
    transfer_id      uuid        NOT NULL REFERENCES transfers (id) ON DELETE CASCADE,
    position         integer     NOT NULL,
    source_name      text        NOT NULL,
    target_role      text,
    target_path      text        NOT NULL,
    uidvalidity      bigint,
    last_uid         bigint      NOT NULL DEFAULT 0,
    messages_total   integer     NOT NULL DEFAULT 0,
    bytes_total      bigint      NOT NULL DEFAULT 0,
    done             boolean     NOT NULL DEFAULT false,
    PRIMARY KEY (transfer_id, position)
);
