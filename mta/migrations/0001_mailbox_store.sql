-- The mailbox store, shaped for JMAP Mail (RFC 8621): per address (a JMAP
-- account) mailboxes, emails over content-addressed blobs, threads, keywords,
-- a change log whose last id is the JMAP state string, and quota usage.
-- Everything references mail.addresses(id) ON DELETE CASCADE: deleting an
-- address deletes its mail.

CREATE TABLE mailboxes (
    id             uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
    address_id     uuid        NOT NULL REFERENCES mail.addresses (id) ON DELETE CASCADE,
    parent_id      uuid        REFERENCES mailboxes (id) ON DELETE CASCADE,
    name           text        NOT NULL CHECK (length(name) BETWEEN 1 AND 255),
    role           text        CHECK (role IN ('inbox', 'drafts', 'sent', 'trash', 'junk', 'archive')),
    sort_order     integer     NOT NULL DEFAULT 0,
    -- Kept by the triggers below, so every writer (delivery, webmail, JMAP) keeps them right.
    total_emails   integer     NOT NULL DEFAULT 0,
    unread_emails  integer     NOT NULL DEFAULT 0,
    is_subscribed  boolean     NOT NULL DEFAULT true,
    created_at     timestamptz NOT NULL
);
-- One name per parent (case-insensitive, as IMAP servers compare), one mailbox per role.
CREATE UNIQUE INDEX mailboxes_name_key
    ON mailboxes (address_id, coalesce(parent_id, '00000000-0000-0000-0000-000000000000'::uuid), lower(name));
CREATE UNIQUE INDEX mailboxes_role_key ON mailboxes (address_id, role) WHERE role IS NOT NULL;
CREATE INDEX mailboxes_parent ON mailboxes (parent_id) WHERE parent_id IS NOT NULL;

CREATE TABLE threads (
    id          uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
    address_id  uuid        NOT NULL REFERENCES mail.addresses (id) ON DELETE CASCADE,
    created_at  timestamptz NOT NULL
);
CREATE INDEX threads_address ON threads (address_id);

-- Message-ids seen in an address's mail, each pointing at its thread: a new
-- message joins the thread of any id in its Message-ID, In-Reply-To or References.
CREATE TABLE thread_refs (
    address_id  uuid NOT NULL REFERENCES mail.addresses (id) ON DELETE CASCADE,
    message_id  text NOT NULL,
    thread_id   uuid NOT NULL REFERENCES threads (id) ON DELETE CASCADE,
    PRIMARY KEY (address_id, message_id)
);
CREATE INDEX thread_refs_thread ON thread_refs (thread_id);

CREATE TABLE emails (
    id             uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
    address_id     uuid        NOT NULL REFERENCES mail.addresses (id) ON DELETE CASCADE,
    -- SHA-256 of the raw MIME in the blob store; several recipients share one blob.
    blob_id        text        NOT NULL CHECK (blob_id ~ '^[0-9a-f]{64}$'),
    thread_id      uuid        NOT NULL REFERENCES threads (id),
    size           integer     NOT NULL CHECK (size >= 0),
    received_at    timestamptz NOT NULL,
    -- JMAP keywords, lower-case ($seen, $flagged, $answered, $draft, custom).
    keywords       text[]      NOT NULL DEFAULT '{}',
    -- Parsed header fields (RFC 8621 4.1.2/4.1.3 convenience properties).
    message_id     text,
    in_reply_to    text[]      NOT NULL DEFAULT '{}',
    "references"   text[]      NOT NULL DEFAULT '{}',
    subject        text        NOT NULL DEFAULT '',
    -- [{"name": ..., "email": ...}] as JMAP EmailAddress lists.
    from_addrs     jsonb       NOT NULL DEFAULT '[]'::jsonb,
    to_addrs       jsonb       NOT NULL DEFAULT '[]'::jsonb,
    cc_addrs       jsonb       NOT NULL DEFAULT '[]'::jsonb,
    sent_at        timestamptz,
    preview        text        NOT NULL DEFAULT '' CHECK (length(preview) <= 256),
    has_attachment boolean     NOT NULL DEFAULT false,
    envelope_from  text        NOT NULL DEFAULT '',
    -- Words of subject, from, to and cc for header search (GIN, 'simple' config:
    -- no stemming, names and addresses are not English prose).
    search         tsvector    GENERATED ALWAYS AS (
        to_tsvector('simple',
            subject || ' ' || coalesce(jsonb_path_query_array(from_addrs, '$[*].*')::text, '') || ' '
            || coalesce(jsonb_path_query_array(to_addrs, '$[*].*')::text, '') || ' '
            || coalesce(jsonb_path_query_array(cc_addrs, '$[*].*')::text, ''))
    ) STORED
);
CREATE INDEX emails_address_received ON emails (address_id, received_at DESC, id DESC);
CREATE INDEX emails_thread ON emails (thread_id, received_at);
CREATE INDEX emails_message_id ON emails (address_id, message_id) WHERE message_id IS NOT NULL;
CREATE INDEX emails_search ON emails USING gin (search);
CREATE INDEX emails_blob ON emails (blob_id);

-- Mailbox membership (JMAP mailboxIds): an email may be in several mailboxes.
-- received_at and seen are copied here so a folder lists newest first and counts
-- its unread mail from this index alone, at 100,000 messages per mailbox.
CREATE TABLE email_mailboxes (
    mailbox_id   uuid        NOT NULL REFERENCES mailboxes (id) ON DELETE CASCADE,
    email_id     uuid        NOT NULL REFERENCES emails (id) ON DELETE CASCADE,
    received_at  timestamptz NOT NULL,
    seen         boolean     NOT NULL DEFAULT false,
    PRIMARY KEY (mailbox_id, email_id)
);
CREATE INDEX email_mailboxes_listing ON email_mailboxes (mailbox_id, received_at DESC, email_id DESC);
CREATE INDEX email_mailboxes_email ON email_mailboxes (email_id);

CREATE FUNCTION email_mailboxes_count() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        UPDATE mta.mailboxes
           SET total_emails = total_emails + 1,
               unread_emails = unread_emails + CASE WHEN NEW.seen THEN 0 ELSE 1 END
         WHERE id = NEW.mailbox_id;
        RETURN NEW;
    END IF;
    UPDATE mta.mailboxes
       SET total_emails = total_emails - 1,
           unread_emails = unread_emails - CASE WHEN OLD.seen THEN 0 ELSE 1 END
     WHERE id = OLD.mailbox_id;
    RETURN OLD;
END $$;
CREATE TRIGGER email_mailboxes_count AFTER INSERT OR DELETE ON email_mailboxes
    FOR EACH ROW EXECUTE FUNCTION email_mailboxes_count();

-- $seen changes on an email flow into its memberships (and so into unread counts).
CREATE FUNCTION emails_seen_sync() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    now_seen boolean := '$seen' = ANY (NEW.keywords);
BEGIN
    IF now_seen IS DISTINCT FROM ('$seen' = ANY (OLD.keywords)) THEN
        UPDATE mta.mailboxes m
           SET unread_emails = unread_emails + CASE WHEN now_seen THEN -1 ELSE 1 END
          FROM mta.email_mailboxes em
         WHERE em.email_id = NEW.id AND m.id = em.mailbox_id;
        UPDATE mta.email_mailboxes SET seen = now_seen WHERE email_id = NEW.id;
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER emails_seen_sync AFTER UPDATE OF keywords ON emails
    FOR EACH ROW EXECUTE FUNCTION emails_seen_sync();

-- Per-account change log (RFC 8620 5.2 /changes): the id of an account's latest
-- row is its state string; /changes reads the rows after a client's state.
CREATE TABLE changes (
    id          bigserial   PRIMARY KEY,
    address_id  uuid        NOT NULL REFERENCES mail.addresses (id) ON DELETE CASCADE,
    type_name   text        NOT NULL CHECK (type_name IN ('Email', 'Mailbox', 'Thread')),
    object_id   uuid        NOT NULL,
    change      text        NOT NULL CHECK (change IN ('created', 'updated', 'destroyed')),
    created_at  timestamptz NOT NULL
);
CREATE INDEX changes_address ON changes (address_id, type_name, id);

CREATE TABLE quota_usage (
    address_id  uuid   PRIMARY KEY REFERENCES mail.addresses (id) ON DELETE CASCADE,
    used_bytes  bigint NOT NULL DEFAULT 0 CHECK (used_bytes >= 0),
    emails      integer NOT NULL DEFAULT 0 CHECK (emails >= 0)
);

-- Recent mail events of an address, for the panel's activity view.
CREATE TABLE activity (
    id           bigserial   PRIMARY KEY,
    address_id   uuid        NOT NULL REFERENCES mail.addresses (id) ON DELETE CASCADE,
    kind         text        NOT NULL CHECK (kind IN ('received', 'filtered', 'refused', 'failed')),
    peer         text        NOT NULL DEFAULT '',
    sender       text        NOT NULL DEFAULT '',
    subject      text        NOT NULL DEFAULT '',
    outcome      text        NOT NULL,
    detail       text        NOT NULL DEFAULT '',
    email_id     uuid,
    created_at   timestamptz NOT NULL
);
CREATE INDEX activity_address ON activity (address_id, created_at DESC, id DESC);
CREATE INDEX activity_created ON activity (created_at);

-- Sieve filters of an address, run in position order on delivery.
CREATE TABLE filters (
    id          uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
    account_id  uuid        NOT NULL REFERENCES mail.accounts (id) ON DELETE CASCADE,
    address_id  uuid        NOT NULL REFERENCES mail.addresses (id) ON DELETE CASCADE,
    name        text        NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    script      text        NOT NULL CHECK (length(script) <= 65536),
    enabled     boolean     NOT NULL DEFAULT true,
    position    integer     NOT NULL DEFAULT 0,
    created_at  timestamptz NOT NULL,
    updated_at  timestamptz NOT NULL
);
CREATE INDEX filters_account ON filters (account_id, created_at DESC);
CREATE INDEX filters_address ON filters (address_id, position, created_at) WHERE enabled;

-- Sieve redirects waiting for the outbound queue (built with sending); recorded now.
CREATE TABLE redirects (
    id           uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
    address_id   uuid        NOT NULL REFERENCES mail.addresses (id) ON DELETE CASCADE,
    filter_id    uuid        REFERENCES filters (id) ON DELETE SET NULL,
    blob_id      text        NOT NULL,
    mail_from    text        NOT NULL,
    rcpt_to      text        NOT NULL,
    status       text        NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'sent', 'failed')),
    created_at   timestamptz NOT NULL
);
CREATE INDEX redirects_pending ON redirects (created_at) WHERE status = 'pending';
