-- Events an account's webhooks deliver: email.* (the outbound queue and the
-- sending API), email.received (inbound delivery), domain.* and address.*
-- (written by mail/ through mta/mailstore.py). Each row is written in the
-- transaction of the state change it reports, so an event exists exactly when
-- its change does. The payload is the body a receiver gets, Resend-shaped:
-- {"type", "created_at", "data": {...}}.
CREATE TABLE events (
    id             uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
    account_id     uuid        NOT NULL REFERENCES mail.accounts (id) ON DELETE CASCADE,
    type           text        NOT NULL CHECK (type ~ '^[a-z_]+\.[a-z_]+$'),
    -- The sent or received email the event is about, if any (not a foreign key:
    -- an event outlives the message it reports).
    email_id       uuid,
    payload        jsonb       NOT NULL,
    created_at     timestamptz NOT NULL,
    -- Set when the webhook fan-out has turned the event into deliveries; a
    -- sequence cursor would skip a row committed after a later one.
    dispatched_at  timestamptz
);
CREATE INDEX events_account ON events (account_id, created_at DESC, id DESC);
CREATE INDEX events_email ON events (email_id, created_at) WHERE email_id IS NOT NULL;
CREATE INDEX events_undispatched ON events (created_at) WHERE dispatched_at IS NULL;
