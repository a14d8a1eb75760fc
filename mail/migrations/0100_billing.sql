-- Billing (mail/billing/): plans, the account's subscription, usage counters,
-- the payment provider's events, payment methods, transactions and the
-- billing activity. docs/mail.md, "Billing".

-- Plans as the operator's PLANS_FILE defines them, synchronised at start
-- (mail/billing/plans.py). A plan gone from the file stays (accounts may be on
-- it) but is hidden; exactly one plan is the default every account without a
-- subscription is on.
CREATE TABLE plans (
    id              text        PRIMARY KEY CHECK (id ~ '^[a-z0-9][a-z0-9_-]{0,39}$'),
    name            text        NOT NULL,
    description     text        NOT NULL DEFAULT '',
    position        integer     NOT NULL DEFAULT 0,
    visible         boolean     NOT NULL DEFAULT true,
    is_default      boolean     NOT NULL DEFAULT false,
    -- Minor units (cents) per interval; 0 is a free plan.
    price           bigint      NOT NULL DEFAULT 0 CHECK (price >= 0),
    currency        text        NOT NULL DEFAULT 'usd',
    "interval"      text        NOT NULL DEFAULT 'month' CHECK ("interval" IN ('month', 'year')),
    -- {"webhooks": true, ...}: a feature absent is off.
    features        jsonb       NOT NULL DEFAULT '{}',
    -- {"domains": 3, ...}: a limit absent or null is unlimited.
    limits          jsonb       NOT NULL DEFAULT '{}',
    stripe_price_id text,
    updated_at      timestamptz NOT NULL
);
CREATE UNIQUE INDEX plans_one_default ON plans (is_default) WHERE is_default;
CREATE INDEX plans_visible ON plans (position, id) WHERE visible;

-- One row per account that ever subscribed or reserved a counted resource:
-- the row every reservation locks (SELECT ... FOR UPDATE), so two requests
-- racing for the last slot are serialised (mail/billing/entitlement.py).
CREATE TABLE billing_accounts (
    account_id               uuid        PRIMARY KEY REFERENCES accounts (id) ON DELETE CASCADE,
    -- NULL: the default plan.
    plan_id                  text        REFERENCES plans (id),
    -- none: on the default plan; active; cancelled (at period end, still
    -- active until then); past_due (a payment failed, entitled until the
    -- grace ends); lapsed (back on the default plan).
    status                   text        NOT NULL DEFAULT 'none'
                             CHECK (status IN ('none', 'active', 'cancelled', 'past_due', 'lapsed')),
    current_period_start     timestamptz,
    current_period_end       timestamptz,
    provider                 text        NOT NULL DEFAULT 'none' CHECK (provider IN ('none', 'stripe')),
    customer_id              text,
    subscription_id          text,
    -- created of the newest provider event applied to the subscription: an
    -- older event arriving late changes nothing (out-of-order safety).
    provider_event_at        timestamptz,
    tax_id_type              text,
    tax_id_value             text,
    tax_id_provider_id       text,
    updated_at               timestamptz
);
CREATE UNIQUE INDEX billing_accounts_customer ON billing_accounts (customer_id)
    WHERE customer_id IS NOT NULL;
CREATE INDEX billing_accounts_due ON billing_accounts (current_period_end)
    WHERE status IN ('active', 'cancelled', 'past_due');

-- Counted per calendar month (UTC): sends through the API and submission.
CREATE TABLE billing_usage (
    account_id  uuid    NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    period      date    NOT NULL,
    sends       bigint  NOT NULL DEFAULT 0 CHECK (sends >= 0),
    PRIMARY KEY (account_id, period)
);

-- Provider events seen, by their id: a replay changes nothing.
CREATE TABLE payment_events (
    id           text        PRIMARY KEY,
    type         text        NOT NULL,
    created      timestamptz NOT NULL,
    account_id   uuid        REFERENCES accounts (id) ON DELETE SET NULL,
    received_at  timestamptz NOT NULL
);

CREATE TABLE payment_methods (
    id           uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
    account_id   uuid        NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    provider_id  text        NOT NULL,
    brand        text        NOT NULL DEFAULT '',
    last4        text        NOT NULL DEFAULT '',
    exp_month    integer,
    exp_year     integer,
    is_default   boolean     NOT NULL DEFAULT false,
    created_at   timestamptz NOT NULL,
    CONSTRAINT payment_methods_provider_key UNIQUE (account_id, provider_id)
);
CREATE INDEX payment_methods_account ON payment_methods (account_id, created_at DESC, id);

-- Invoices and charges, as the provider reports them.
CREATE TABLE billing_transactions (
    id           uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
    account_id   uuid        NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    provider_id  text        NOT NULL,
    kind         text        NOT NULL CHECK (kind IN ('invoice', 'charge')),
    status       text        NOT NULL,
    amount       bigint      NOT NULL DEFAULT 0,
    currency     text        NOT NULL DEFAULT 'usd',
    description  text        NOT NULL DEFAULT '',
    hosted_url   text,
    created_at   timestamptz NOT NULL,
    updated_at   timestamptz NOT NULL,
    CONSTRAINT billing_transactions_provider_key UNIQUE (provider_id)
);
CREATE INDEX billing_transactions_account ON billing_transactions (account_id, created_at DESC, id);

-- Every billing change of an account: who/what moved it and when.
CREATE TABLE billing_activity (
    id          bigserial   PRIMARY KEY,
    account_id  uuid        NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    action      text        NOT NULL,
    detail      jsonb       NOT NULL DEFAULT '{}',
    created_at  timestamptz NOT NULL
);
CREATE INDEX billing_activity_account ON billing_activity (account_id, id DESC);

-- The plan an account is on: its subscription's, else the default. The one
-- definition the entitlement function and the directory's RCPT statement share.
CREATE FUNCTION plan_of(account uuid) RETURNS text
LANGUAGE sql STABLE AS $$
    SELECT coalesce(
        (SELECT b.plan_id FROM mail.billing_accounts b WHERE b.account_id = account),
        (SELECT p.id FROM mail.plans p WHERE p.is_default)
    )
$$;
