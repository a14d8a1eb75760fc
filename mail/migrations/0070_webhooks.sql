-- Webhook endpoints of an account and what was delivered to them (mail/webhooks/).
-- The events themselves are mta.events (the account's event log); a delivery
-- names one by id without a foreign key (mta's migrations run after mail's).
CREATE TABLE webhooks (
    id                   uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
    account_id           uuid        NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    endpoint             text        NOT NULL,
    description          text        NOT NULL DEFAULT '',
    -- Subscribed event types; never empty (the service fills in every type).
    events               text[]      NOT NULL,
    enabled              boolean     NOT NULL DEFAULT true,
    -- Why it is off: 'manual' (PATCH), 'failing' (the run of failures rule).
    disabled_reason      text        CHECK (disabled_reason IN ('manual', 'failing')),
    -- The whsec_ secret sealed (AES-GCM, purpose mail.webhook): each delivery signs with it.
    secret_sealed        text        NOT NULL,
    secret_hint          text        NOT NULL,
    -- The run of failed attempts since the last success (the disabling rule).
    consecutive_failures integer     NOT NULL DEFAULT 0,
    failing_since        timestamptz,
    last_success_at      timestamptz,
    created_at           timestamptz NOT NULL,
    updated_at           timestamptz NOT NULL
);
CREATE INDEX webhooks_account ON webhooks (account_id, created_at DESC, id DESC);

-- One event for one endpoint: its state over every attempt.
CREATE TABLE webhook_deliveries (
    id               uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
    webhook_id       uuid        NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
    account_id       uuid        NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    event_id         uuid        NOT NULL,
    event_type       text        NOT NULL,
    event_created_at timestamptz NOT NULL,
    -- webhook-id of the Standard Webhooks headers: the same on every attempt.
    message_id       text        NOT NULL,
    status           text        NOT NULL DEFAULT 'pending'
                     CHECK (status IN ('pending', 'retrying', 'delivered', 'failed')),
    attempts         integer     NOT NULL DEFAULT 0,
    last_attempt_at  timestamptz,
    next_attempt_at  timestamptz,
    created_at       timestamptz NOT NULL,
    UNIQUE (webhook_id, event_id)
);
CREATE INDEX webhook_deliveries_account ON webhook_deliveries (account_id, event_created_at DESC, id DESC);
CREATE INDEX webhook_deliveries_webhook ON webhook_deliveries (webhook_id, event_created_at DESC, id DESC);

-- Every try: what the receiver answered, how long it took, a bounded excerpt.
CREATE TABLE webhook_attempts (
    id           bigserial   PRIMARY KEY,
    delivery_id  uuid        NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
    attempt      integer     NOT NULL,
    trigger      text        NOT NULL CHECK (trigger IN ('scheduled', 'replay')),
    at           timestamptz NOT NULL,
    status       integer,
    ok           boolean     NOT NULL,
    error        text        NOT NULL DEFAULT '',
    duration_ms  integer     NOT NULL,
    response     text        NOT NULL DEFAULT ''
);
CREATE INDEX webhook_attempts_delivery ON webhook_attempts (delivery_id, id);
