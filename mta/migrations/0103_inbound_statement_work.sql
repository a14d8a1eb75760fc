-- Less database work per stored message (issue 25): statement-level counting,
-- body words indexed by a job right after the commit, one redundant index gone.

-- 1. Memberships are counted once per statement, not once per row.
--
-- The mailbox counts (0001, deferred by the delivery group commit since 0003)
-- and the per-thread counts of mailbox_threads (0060) were row triggers: a
-- PL/pgSQL call and an UPDATE or upsert for every membership written. They are
-- now statement triggers over the statement's transition table: one grouped
-- UPDATE of the mailbox counts and one grouped upsert of mailbox_threads per
-- statement, whatever its number of rows. Same counts, same rows.
DROP TRIGGER email_mailboxes_count ON email_mailboxes;
DROP TRIGGER mailbox_threads_count ON email_mailboxes;
DROP TRIGGER mailbox_threads_move ON email_mailboxes;
DROP FUNCTION email_mailboxes_count();
DROP FUNCTION mailbox_threads_count();
-- Every writer gives the membership's thread (mta/store/emails.py is the only
-- one); the column is NOT NULL, so a writer that forgets fails loudly.
DROP TRIGGER email_mailboxes_thread ON email_mailboxes;
DROP FUNCTION email_mailboxes_thread();

-- Add per-(mailbox, thread) deltas to mailbox_threads: a row whose count
-- reaches zero goes, a new pair is inserted (only with a positive count).
-- Rows are touched in key order, so two statements cannot deadlock on them.
CREATE FUNCTION mailbox_threads_add(boxes uuid[], threads uuid[], n integer[], unread integer[])
RETURNS void LANGUAGE sql AS $$
    WITH d AS (
        SELECT * FROM unnest(boxes, threads, n, unread) AS d (mailbox_id, thread_id, n, unread)
    ), gone AS (
        DELETE FROM mta.mailbox_threads t USING d
         WHERE t.mailbox_id = d.mailbox_id AND t.thread_id = d.thread_id AND t.emails + d.n <= 0
    ), kept AS (
        UPDATE mta.mailbox_threads t SET emails = t.emails + d.n, unread = t.unread + d.unread
          FROM d
         WHERE t.mailbox_id = d.mailbox_id AND t.thread_id = d.thread_id AND t.emails + d.n > 0
    )
    INSERT INTO mta.mailbox_threads AS t (mailbox_id, thread_id, emails, unread)
    SELECT d.mailbox_id, d.thread_id, d.n, d.unread FROM d
     WHERE d.n > 0 AND NOT EXISTS (SELECT 1 FROM mta.mailbox_threads x
                                    WHERE x.mailbox_id = d.mailbox_id AND x.thread_id = d.thread_id)
     ORDER BY 1, 2
    ON CONFLICT (mailbox_id, thread_id) DO UPDATE
       SET emails = t.emails + EXCLUDED.emails, unread = t.unread + EXCLUDED.unread
$$;

-- Memberships written: the mailbox counts (unless the delivery group commit
-- writes them itself, mta/store/counters.py) and the threads, each grouped.
CREATE FUNCTION email_mailboxes_added() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF current_setting('mta.deferred_counts', true) IS DISTINCT FROM 'on' THEN
        UPDATE mta.mailboxes m
           SET total_emails = m.total_emails + d.n, unread_emails = m.unread_emails + d.unread
          FROM (SELECT mailbox_id, count(*)::int AS n, count(*) FILTER (WHERE NOT seen)::int AS unread
                  FROM added GROUP BY mailbox_id ORDER BY mailbox_id) d
         WHERE m.id = d.mailbox_id;
    END IF;
    -- The common case (new mail) is an insert or an increment: no DELETE to plan.
    INSERT INTO mta.mailbox_threads AS t (mailbox_id, thread_id, emails, unread)
    SELECT mailbox_id, thread_id, count(*), count(*) FILTER (WHERE NOT seen)
      FROM added GROUP BY mailbox_id, thread_id ORDER BY mailbox_id, thread_id
    ON CONFLICT (mailbox_id, thread_id) DO UPDATE
       SET emails = t.emails + EXCLUDED.emails, unread = t.unread + EXCLUDED.unread;
    RETURN NULL;
END $$;
CREATE TRIGGER email_mailboxes_added AFTER INSERT ON email_mailboxes
    REFERENCING NEW TABLE AS added
    FOR EACH STATEMENT EXECUTE FUNCTION email_mailboxes_added();

CREATE FUNCTION email_mailboxes_removed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF current_setting('mta.deferred_counts', true) IS DISTINCT FROM 'on' THEN
        UPDATE mta.mailboxes m
           SET total_emails = m.total_emails - d.n, unread_emails = m.unread_emails - d.unread
          FROM (SELECT mailbox_id, count(*)::int AS n, count(*) FILTER (WHERE NOT seen)::int AS unread
                  FROM removed GROUP BY mailbox_id ORDER BY mailbox_id) d
         WHERE m.id = d.mailbox_id;
    END IF;
    PERFORM mta.mailbox_threads_add(array_agg(mailbox_id), array_agg(thread_id),
                                    array_agg(-n), array_agg(-unread))
       FROM (SELECT mailbox_id, thread_id, count(*)::int AS n,
                    count(*) FILTER (WHERE NOT seen)::int AS unread
               FROM removed GROUP BY mailbox_id, thread_id ORDER BY mailbox_id, thread_id) d
     HAVING count(*) > 0;
    RETURN NULL;
END $$;
CREATE TRIGGER email_mailboxes_removed AFTER DELETE ON email_mailboxes
    REFERENCING OLD TABLE AS removed
    FOR EACH STATEMENT EXECUTE FUNCTION email_mailboxes_removed();

-- A membership changing mailbox, thread or seen moves its thread counts
-- (the mailbox counts of a seen change are kept by emails_seen_sync, 0001).
-- A trigger with transition tables takes no column list, so it sees every
-- UPDATE and keeps the pairs whose counts changed.
CREATE FUNCTION email_mailboxes_moved() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM mta.mailbox_threads_add(array_agg(mailbox_id), array_agg(thread_id),
                                    array_agg(n), array_agg(unread))
       FROM (SELECT mailbox_id, thread_id, sum(n)::int AS n, sum(unread)::int AS unread
               FROM (SELECT mailbox_id, thread_id, 1 AS n, CASE WHEN seen THEN 0 ELSE 1 END AS unread
                       FROM after_rows
                     UNION ALL
                     SELECT mailbox_id, thread_id, -1, CASE WHEN seen THEN 0 ELSE -1 END
                       FROM before_rows) x
              GROUP BY mailbox_id, thread_id
             HAVING sum(n) <> 0 OR sum(unread) <> 0
              ORDER BY mailbox_id, thread_id) d
     HAVING count(*) > 0;
    RETURN NULL;
END $$;
CREATE TRIGGER email_mailboxes_moved AFTER UPDATE ON email_mailboxes
    REFERENCING OLD TABLE AS before_rows NEW TABLE AS after_rows
    FOR EACH STATEMENT EXECUTE FUNCTION email_mailboxes_moved();

-- 2. The words of the body in a table of their own, filled right after the commit.
--
-- to_tsvector over a 10 KB body cost PostgreSQL about 0.6 ms per delivered
-- message, inside the statement that stores it, before the 250. Delivery now
-- queues the words' text in words_backlog (one narrow row, no index but its
-- key) and the mta.index_bodies job, enqueued by the same commit, turns them
-- into email_words with one set-based statement. Email/set, Email/import and
-- webmail's own copies still write email_words at once. Text search is exact
-- for an email once it has a row in email_words (docs/mail.md, "Search").
--
-- In a table of its own because indexing later must not rewrite the email:
-- an UPDATE of a GIN-indexed column of mta.emails is never HOT (a new row
-- version and an entry in each of its indexes).
CREATE TABLE email_words (
    email_id uuid     PRIMARY KEY REFERENCES emails (id) ON DELETE CASCADE,
    words    tsvector NOT NULL
);
INSERT INTO email_words (email_id, words)
SELECT id, body_search FROM emails WHERE body_search IS NOT NULL;
CREATE INDEX email_words_search ON email_words USING gin (words);

-- Emails whose words wait for the job. body: the words' text (text body parts
-- and Bcc, as delivery parsed them); NULL for mail stored before 0020, which
-- the job parses from the raw message.
CREATE TABLE words_backlog (
    email_id uuid PRIMARY KEY REFERENCES emails (id) ON DELETE CASCADE,
    body     text
);
INSERT INTO words_backlog (email_id) SELECT id FROM emails WHERE body_search IS NULL;

-- Goes with its GIN index and the backlog's partial index (emails_body_unindexed).
ALTER TABLE emails DROP COLUMN body_search;

-- 3. emails_thread (thread_id, received_at) and emails_thread_id (thread_id, id)
-- answer the same lookups (an email's thread-mates, by thread id alone); every
-- email paid for both.
DROP INDEX emails_thread;

-- 4. A delivery batch's mailbox counts and quota usage, queued with its rows
-- and applied right after its commit (mta/store/counters.py): updating the
-- counter rows in the batch's own transaction held their locks through its
-- fsync, and two daemon processes delivering to one mailbox took turns.
-- owners: the address of each mailbox (its Mailbox change is logged when
-- applied); words_at: when the batch last queued body words (the words job
-- is enqueued for that second when applied). The apply also sends the
-- batch's NOTIFYs (mta/store/counters.py says why).
CREATE TABLE pending_counts (
    id          bigserial   PRIMARY KEY,
    boxes       uuid[]      NOT NULL,
    owners      uuid[]      NOT NULL,
    totals      integer[]   NOT NULL,
    unread      integer[]   NOT NULL,
    addresses   uuid[]      NOT NULL,
    bytes       bigint[]    NOT NULL,
    emails      integer[]   NOT NULL,
    counted_at  timestamptz NOT NULL,
    words_at    timestamptz,
    -- The batch logged events: the event log's NOTIFY is sent by the apply.
    notify_events boolean   NOT NULL DEFAULT false
);

-- The change log's notification of a delivery batch is sent by the apply of
-- its counts (its Mailbox changes, one per mailbox), not by its own commit:
-- a watching client hears of the new mail once, when Email, Thread and
-- Mailbox states have all moved, as before the counts moved after the commit.
CREATE OR REPLACE FUNCTION changes_notify() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    a uuid;
BEGIN
    IF current_setting('mta.deferred_counts', true) = 'on' THEN
        RETURN NULL;
    END IF;
    FOR a IN SELECT DISTINCT address_id FROM new_rows LOOP
        PERFORM pg_notify('mta_changes', a::text);
    END LOOP;
    RETURN NULL;
END $$;
