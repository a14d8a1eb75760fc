-- JMAP (RFC 8620, 8621): uploaded blobs, identities, vacation responses and the
-- replies they sent, push subscriptions, and the cross-process notification
-- that feeds EventSource and push from the change log.

-- The change log also carries the types JMAP adds (object ids stay uuids;
-- VacationResponse's singleton is logged under the address id).
ALTER TABLE changes DROP CONSTRAINT changes_type_name_check;
ALTER TABLE changes ADD CONSTRAINT changes_type_name_check
    CHECK (type_name IN ('Email', 'Mailbox', 'Thread', 'Identity', 'VacationResponse',
                         'EmailSubmission', 'EmailDelivery', 'PushSubscription'));
-- The oldest change an account may still ask about: /changes from a state
-- before it answers cannotCalculateChanges (RFC 8620 5.2).
CREATE TABLE changes_pruned (
    address_id  uuid   PRIMARY KEY REFERENCES mail.addresses (id) ON DELETE CASCADE,
    upto        bigint NOT NULL
);
CREATE INDEX changes_created ON changes (created_at);

-- One notification per committed statement and account: LISTEN mta_changes
-- in any process (the JMAP server's EventSource, push) hears new mail that the
-- inbound daemon stored in another. Payload: the address id.
CREATE FUNCTION changes_notify() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    a uuid;
BEGIN
    FOR a IN SELECT DISTINCT address_id FROM new_rows LOOP
        PERFORM pg_notify('mta_changes', a::text);
    END LOOP;
    RETURN NULL;
END $$;
CREATE TRIGGER changes_notify AFTER INSERT ON changes
    REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION changes_notify();

-- Blobs uploaded over JMAP (RFC 8620 6.1): the account that uploaded one may
-- use it; rows older than JMAP_UPLOAD_KEEP_HOURS are dropped and the blob
-- collected unless an email now refers to it.
CREATE TABLE uploads (
    address_id  uuid        NOT NULL REFERENCES mail.addresses (id) ON DELETE CASCADE,
    blob_id     text        NOT NULL CHECK (blob_id ~ '^[0-9a-f]{64}$'),
    type        text        NOT NULL CHECK (length(type) <= 255),
    size        bigint      NOT NULL CHECK (size >= 0),
    created_at  timestamptz NOT NULL,
    PRIMARY KEY (address_id, blob_id)
);
CREATE INDEX uploads_created ON uploads (created_at);
CREATE INDEX uploads_blob ON uploads (blob_id);
CREATE TRIGGER uploads_blob_candidate AFTER DELETE ON uploads
    FOR EACH ROW EXECUTE FUNCTION blob_candidate();

-- JMAP Identity (RFC 8621 6): who an address may send as.
CREATE TABLE identities (
    id              uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
    address_id      uuid        NOT NULL REFERENCES mail.addresses (id) ON DELETE CASCADE,
    name            text        NOT NULL DEFAULT '' CHECK (length(name) <= 255),
    email           text        NOT NULL CHECK (length(email) <= 320),
    reply_to        jsonb,
    bcc             jsonb,
    text_signature  text        NOT NULL DEFAULT '' CHECK (length(text_signature) <= 65536),
    html_signature  text        NOT NULL DEFAULT '' CHECK (length(html_signature) <= 65536),
    created_at      timestamptz NOT NULL
);
CREATE INDEX identities_address ON identities (address_id, created_at);

-- JMAP VacationResponse (RFC 8621 8): one per address.
CREATE TABLE vacation_responses (
    address_id  uuid        PRIMARY KEY REFERENCES mail.addresses (id) ON DELETE CASCADE,
    is_enabled  boolean     NOT NULL DEFAULT false,
    from_date   timestamptz,
    to_date     timestamptz,
    subject     text        CHECK (length(subject) <= 998),
    text_body   text        CHECK (length(text_body) <= 65536),
    html_body   text        CHECK (length(html_body) <= 65536),
    updated_at  timestamptz NOT NULL
);

-- Who a vacation response answered, and when (RFC 3834 2: at most one reply
-- per sender per period). A new (re-enabled or edited) response starts over.
CREATE TABLE vacation_replies (
    address_id  uuid        NOT NULL REFERENCES mail.addresses (id) ON DELETE CASCADE,
    sender      text        NOT NULL,
    replied_at  timestamptz NOT NULL,
    PRIMARY KEY (address_id, sender)
);

-- Auto-replies waiting for the outbound queue (like redirects): the raw reply
-- in the blob store, envelope beside it. The sending work picks 'pending' rows.
CREATE TABLE auto_replies (
    id           uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
    address_id   uuid        NOT NULL REFERENCES mail.addresses (id) ON DELETE CASCADE,
    kind         text        NOT NULL DEFAULT 'vacation' CHECK (kind IN ('vacation')),
    mail_from    text        NOT NULL,
    rcpt_to      text        NOT NULL,
    message      bytea       NOT NULL,
    status       text        NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'sent', 'failed')),
    created_at   timestamptz NOT NULL
);
CREATE INDEX auto_replies_pending ON auto_replies (created_at) WHERE status = 'pending';

-- JMAP PushSubscription (RFC 8620 7.2): owned by the principal that made it
-- (an address for Basic sessions, a panel account for OAuth ones).
CREATE TABLE push_subscriptions (
    id                 uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
    principal          text        NOT NULL,
    -- The address ids this principal's session covers, when it was made.
    address_ids        uuid[]      NOT NULL,
    device_client_id   text        NOT NULL CHECK (length(device_client_id) <= 255),
    url                text        NOT NULL CHECK (length(url) <= 2048),
    keys               jsonb,
    verification_code  text        NOT NULL,
    verified           boolean     NOT NULL DEFAULT false,
    expires            timestamptz,
    types              text[],
    created_at         timestamptz NOT NULL
);
CREATE INDEX push_subscriptions_principal ON push_subscriptions (principal);
CREATE INDEX push_subscriptions_addresses ON push_subscriptions USING gin (address_ids);
