-- Mailbox counts may be deferred to the end of a transaction: the delivery
-- group commit sets mta.deferred_counts for its transaction and writes every
-- counter delta of the batch in one statement just before COMMIT
-- (mta/store/counters.py). Updating a mailbox's counter row once per message
-- held its row lock for the whole batch, and two daemon processes delivering
-- to one mailbox waited on each other. Every other writer still counts here.
CREATE OR REPLACE FUNCTION email_mailboxes_count() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF current_setting('mta.deferred_counts', true) = 'on' THEN
        RETURN NULL;
    END IF;
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
