-- JMAP EmailSubmission (RFC 8621 7): one row per submission, whose id is the
-- id of the outbound message it queued (mta.outbound_messages), so its
-- undoStatus and deliveryStatus are read from the queue, never copied.
CREATE TABLE email_submissions (
    id           uuid        PRIMARY KEY,
    address_id   uuid        NOT NULL REFERENCES mail.addresses (id) ON DELETE CASCADE,
    identity_id  uuid        NOT NULL,
    email_id     uuid        NOT NULL,
    thread_id    uuid        NOT NULL,
    -- {"mailFrom": {"email", "parameters"}, "rcptTo": [...]} as the client gave or we derived.
    envelope     jsonb       NOT NULL,
    send_at      timestamptz NOT NULL,
    created_at   timestamptz NOT NULL
);
CREATE INDEX email_submissions_address ON email_submissions (address_id, send_at DESC);

-- The queue worker knows nothing of JMAP (the argument names the row's message id column): when a submitted message's recipient
-- or status changes, the submission's state string moves with it (so /changes
-- and push tell the client its deliveryStatus or undoStatus changed).
CREATE FUNCTION email_submission_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO mta.changes (address_id, type_name, object_id, change, created_at)
    SELECT s.address_id, 'EmailSubmission', s.id, 'updated', now()
      FROM mta.email_submissions s
     WHERE s.id = (to_jsonb(NEW) ->> TG_ARGV[0])::uuid;
    RETURN NULL;
END
$$;
CREATE TRIGGER outbound_recipients_submission AFTER UPDATE ON outbound_recipients
    FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status
                       OR OLD.last_reply IS DISTINCT FROM NEW.last_reply)
    EXECUTE FUNCTION email_submission_changed('message_id');
CREATE TRIGGER outbound_messages_submission AFTER UPDATE ON outbound_messages
    FOR EACH ROW WHEN (OLD.status = 'scheduled' AND NEW.status IS DISTINCT FROM OLD.status)
    EXECUTE FUNCTION email_submission_changed('id');

-- Vacation replies now leave through the outbound queue as they are made
-- (mta/vacation.py): the row stays as the record and names the queued message.
ALTER TABLE auto_replies ADD COLUMN outbound_id uuid;
