-- The realtime socket and content webhooks (issue 18).

-- Socket tickets: single use, 30 seconds. Only the SHA-256 of the ticket is
-- stored, in the database so that any gateway process can redeem it.
CREATE TABLE realtime_tickets (
    ticket_hash      text        PRIMARY KEY,
    -- 'session' (a person) or 'delivery' (a delivery key).
    kind             text        NOT NULL CHECK (kind IN ('session', 'delivery')),
    session_id       bigint      REFERENCES sessions (id) ON DELETE CASCADE,
    delivery_key_id  text        REFERENCES delivery_keys (id) ON DELETE CASCADE,
    created_at       timestamptz NOT NULL,
    expires_at       timestamptz NOT NULL,
    CHECK ((kind = 'session') = (session_id IS NOT NULL)),
    CHECK ((kind = 'delivery') = (delivery_key_id IS NOT NULL))
);
CREATE INDEX realtime_tickets_expiry ON realtime_tickets (expires_at);

-- Who is viewing an entry (the entry:<id> topic), across every gateway
-- process: each process refreshes its own sockets' rows, so a process that
-- died stops counting once its rows go stale.
CREATE TABLE realtime_presence (
    socket_id   text        NOT NULL,
    entry_id    text        NOT NULL,
    user_id     text        NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    seen_at     timestamptz NOT NULL,
    PRIMARY KEY (socket_id, entry_id)
);
CREATE INDEX realtime_presence_entry ON realtime_presence (entry_id, seen_at);

CREATE TABLE webhooks (
    id             text        PRIMARY KEY,
    name           text        NOT NULL,
    url            text        NOT NULL,
    -- Event names it receives; empty means every webhook event.
    events         text[]      NOT NULL DEFAULT '{}',
    enabled        boolean     NOT NULL DEFAULT true,
    -- whsec_... sealed with SECRET (purpose content.webhook), opened to sign.
    secret_sealed  text        NOT NULL,
    secret_hint    text        NOT NULL,
    created_at     timestamptz NOT NULL,
    updated_at     timestamptz NOT NULL
);

-- Every delivery attempt, kept for the admin to read.
CREATE TABLE webhook_attempts (
    id           bigserial   PRIMARY KEY,
    webhook_id   text        NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
    message_id   text        NOT NULL,
    event        text        NOT NULL,
    attempt      integer     NOT NULL,
    at           timestamptz NOT NULL,
    -- The receiver's status, or NULL when no answer came (refused, timed out).
    status       integer,
    ok           boolean     NOT NULL,
    error        text        NOT NULL DEFAULT '',
    duration_ms  integer     NOT NULL
);
CREATE INDEX webhook_attempts_webhook ON webhook_attempts (webhook_id, id DESC);
