-- The thread of each membership, copied like received_at and seen (an email
-- never changes thread): Email/query with collapseThreads counts a folder's
-- threads from the (mailbox_id, thread_id) index alone, and finds an email's
-- thread-mates in the same folder without reading mta.emails.
ALTER TABLE email_mailboxes ADD COLUMN thread_id uuid;
UPDATE email_mailboxes em SET thread_id = e.thread_id FROM emails e WHERE e.id = em.email_id;
ALTER TABLE email_mailboxes ALTER COLUMN thread_id SET NOT NULL;
CREATE INDEX email_mailboxes_threads ON email_mailboxes (mailbox_id, thread_id, received_at DESC, email_id DESC);

-- Writers that do not give it (any but mta/store/emails.py) get it filled in.
CREATE FUNCTION email_mailboxes_thread() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.thread_id IS NULL THEN
        SELECT thread_id INTO NEW.thread_id FROM mta.emails WHERE id = NEW.email_id;
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER email_mailboxes_thread BEFORE INSERT ON email_mailboxes
    FOR EACH ROW EXECUTE FUNCTION email_mailboxes_thread();
