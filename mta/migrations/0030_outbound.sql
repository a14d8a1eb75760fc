-- The outbound queue: everything that leaves (submission, the sending API, the
-- panel's own mail, webmail and JMAP later, DSNs), one row per message and one
-- per (message, recipient). mta/store/outbound.py owns the SQL; mail/ reaches it
-- through mta/mailstore.py (enqueue, outbound_status, cancel_scheduled, ...).
CREATE TABLE outbound_messages (
    -- The caller's id: for API mail it is the Resend email id.
    id            uuid        PRIMARY KEY,
    -- NULL only for system mail to no account (a DSN to a stranger, a notice
    -- owed after the account was deleted).
    account_id    uuid        REFERENCES mail.accounts (id) ON DELETE CASCADE,
    -- The hosted address that sends it, when there is one: its activity log.
    address_id    uuid        REFERENCES mail.addresses (id) ON DELETE SET NULL,
    source        text        NOT NULL
                  CHECK (source IN ('submission', 'api', 'system', 'webmail', 'jmap')),
    -- The envelope sender as the author gave it; '' for a DSN (RFC 5321 4.5.5).
    mail_from     text        NOT NULL,
    -- The raw MIME, committed with the row (TOASTed past 2 kB; messages are
    -- capped by SMTP_MAX_MESSAGE_SIZE). The panel's own mail carries one-time
    -- links: the caller may have it sealed (raw_sealed, purpose "mta.outbound").
    -- Both are erased once the message is final for a sealed or system message.
    raw           bytea,
    raw_sealed    text,
    size          integer     NOT NULL,
    created_at    timestamptz NOT NULL,
    scheduled_at  timestamptz,
    -- Past this a recipient still deferred fails (the bounded lifetime,
    -- OUTBOUND_MAX_LIFETIME from the time it was due).
    expires_at    timestamptz NOT NULL,
    -- The message's Resend last_event.
    status        text        NOT NULL CHECK (status IN (
                      'scheduled', 'queued', 'sent', 'delivered', 'delivery_delayed',
                      'bounced', 'failed', 'canceled', 'complained')),
    -- The Resend `data` object copied into every email.* event of the message.
    event_data    jsonb,
    updated_at    timestamptz NOT NULL
);
CREATE INDEX outbound_messages_account ON outbound_messages (account_id, created_at DESC);
CREATE INDEX outbound_messages_address ON outbound_messages (address_id)
    WHERE address_id IS NOT NULL;

CREATE TABLE outbound_recipients (
    message_id       uuid        NOT NULL REFERENCES outbound_messages (id) ON DELETE CASCADE,
    -- Order as the author gave them (a DSN lists them in that order).
    position         integer     NOT NULL,
    rcpt             text        NOT NULL,
    status           text        NOT NULL DEFAULT 'queued' CHECK (status IN (
                         'queued', 'deferred', 'delivered', 'bounced', 'failed',
                         'suppressed', 'canceled')),
    attempts         integer     NOT NULL DEFAULT 0,
    -- When the worker may try it next; NULL once final. A worker claims a
    -- recipient by moving this forward by its lease, so a worker killed
    -- mid-delivery loses nothing: the row comes due again when the lease ends.
    next_attempt_at  timestamptz,
    last_attempt_at  timestamptz,
    -- The remote server's last reply ("550 5.1.1 no such user"), or ours.
    last_reply       text        NOT NULL DEFAULT '',
    -- The host (MX or relay) of the last attempt.
    destination      text        NOT NULL DEFAULT '',
    -- The VERP token of the Return-Path (bounces+<token>@<domain>): an
    -- asynchronous bounce to it names this recipient.
    verp             text        NOT NULL UNIQUE,
    PRIMARY KEY (message_id, position)
);
-- The worker's scan: only the rows that are still to be tried.
CREATE INDEX outbound_recipients_due ON outbound_recipients (next_attempt_at)
    WHERE next_attempt_at IS NOT NULL;

-- Addresses an account does not send to: hard bounces, complaints, and the
-- ones the owner added. Checked at enqueue and again before each attempt.
CREATE TABLE suppressions (
    id          uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
    account_id  uuid        NOT NULL REFERENCES mail.accounts (id) ON DELETE CASCADE,
    email       text        NOT NULL CHECK (email = lower(email)),
    reason      text        NOT NULL CHECK (reason IN ('bounce', 'complaint', 'manual')),
    -- The message that caused it (no foreign key: it outlives the message).
    email_id    uuid,
    created_at  timestamptz NOT NULL,
    UNIQUE (account_id, email)
);
CREATE INDEX suppressions_account ON suppressions (account_id, created_at DESC);

-- Each outbound attempt of a hosted sender shows in its activity.
ALTER TABLE activity DROP CONSTRAINT activity_kind_check;
ALTER TABLE activity ADD CONSTRAINT activity_kind_check
    CHECK (kind IN ('received', 'filtered', 'refused', 'failed', 'sent', 'deferred', 'bounced'));
