-- The threads of each mailbox, kept with the memberships: one row per
-- (mailbox, thread) with how many of the thread's emails are in the mailbox
-- and how many of those are unread. A mailbox's totalThreads is the number of
-- its rows, unreadThreads the number with unread > 0, and Email/query's
-- collapseThreads total over a mailbox alone is the same count: an
-- index-only count of narrow rows, where counting DISTINCT thread_id over the
-- memberships hashed every membership of the mailbox (174 ms at 100,000).
--
-- Kept by a row trigger, also inside the delivery group commit (it does not
-- look at mta.deferred_counts): a row is per thread, so two deliveries only
-- wait on each other when they file two messages of one thread into one
-- mailbox at once, where the mailbox counter row is shared by every delivery.
CREATE TABLE mailbox_threads (
    mailbox_id uuid NOT NULL REFERENCES mailboxes (id) ON DELETE CASCADE,
    thread_id  uuid NOT NULL,
    emails     integer NOT NULL CHECK (emails > 0),
    unread     integer NOT NULL CHECK (unread >= 0),
    PRIMARY KEY (mailbox_id, thread_id)
);
-- unreadThreads: the threads with an unread email, counted from this index alone.
CREATE INDEX mailbox_threads_unread ON mailbox_threads (mailbox_id) WHERE unread > 0;

INSERT INTO mailbox_threads (mailbox_id, thread_id, emails, unread)
SELECT mailbox_id, thread_id, count(*), count(*) FILTER (WHERE NOT seen)
  FROM email_mailboxes GROUP BY mailbox_id, thread_id;

CREATE FUNCTION mailbox_threads_count() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP IN ('DELETE', 'UPDATE') THEN
        UPDATE mta.mailbox_threads
           SET emails = emails - 1, unread = unread - CASE WHEN OLD.seen THEN 0 ELSE 1 END
         WHERE mailbox_id = OLD.mailbox_id AND thread_id = OLD.thread_id AND emails > 1;
        IF NOT FOUND THEN
            DELETE FROM mta.mailbox_threads
             WHERE mailbox_id = OLD.mailbox_id AND thread_id = OLD.thread_id;
        END IF;
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        INSERT INTO mta.mailbox_threads AS t (mailbox_id, thread_id, emails, unread)
        VALUES (NEW.mailbox_id, NEW.thread_id, 1, CASE WHEN NEW.seen THEN 0 ELSE 1 END)
        ON CONFLICT (mailbox_id, thread_id) DO UPDATE
           SET emails = t.emails + 1, unread = t.unread + EXCLUDED.unread;
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER mailbox_threads_count AFTER INSERT OR DELETE ON email_mailboxes
    FOR EACH ROW EXECUTE FUNCTION mailbox_threads_count();
CREATE TRIGGER mailbox_threads_move AFTER UPDATE OF mailbox_id, thread_id, seen ON email_mailboxes
    FOR EACH ROW WHEN (OLD.mailbox_id <> NEW.mailbox_id OR OLD.thread_id <> NEW.thread_id
                       OR OLD.seen <> NEW.seen)
    EXECUTE FUNCTION mailbox_threads_count();
