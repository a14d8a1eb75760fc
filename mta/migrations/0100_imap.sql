-- IMAP (RFC 9051, RFC 3501): each mailbox's UIDVALIDITY and UIDNEXT, the UID of
-- each message in it, and the UIDs expunged from it (QRESYNC's VANISHED).
--
-- UIDs are given by the IMAP server (mta/store/imap_uids.py) the first time it
-- looks at a mailbox after mail arrived, under the lock of the mailbox's
-- counter row, in (received_at, email_id) order: delivery, imports and JMAP
-- write no UID, so their write paths stay as fast as they were, and a UID is
-- only given to a committed membership, so UIDs rise in the order clients can
-- see messages (a sequence read at insert time would let a later-committing
-- transaction show a smaller UID after a larger one was seen).

CREATE SEQUENCE imap_uid_validity;
-- UIDVALIDITY: a 32-bit non-zero number that never repeats for a mailbox name
-- (a mailbox deleted and created again gets a larger one).
SELECT setval('imap_uid_validity', extract(epoch FROM now())::bigint);

CREATE TABLE imap_mailboxes (
    mailbox_id    uuid    PRIMARY KEY REFERENCES mailboxes (id) ON DELETE CASCADE,
    uid_validity  bigint  NOT NULL DEFAULT nextval('imap_uid_validity')
                          CHECK (uid_validity BETWEEN 1 AND 4294967295),
    uid_next      bigint  NOT NULL DEFAULT 1 CHECK (uid_next BETWEEN 1 AND 4294967295),
    -- Messages with a UID still in the mailbox: compared with mailboxes.total_emails
    -- to learn, without reading the memberships, whether any still needs one.
    live          integer NOT NULL DEFAULT 0 CHECK (live >= 0)
);

CREATE TABLE imap_uids (
    mailbox_id  uuid   NOT NULL REFERENCES mailboxes (id) ON DELETE CASCADE,
    uid         bigint NOT NULL,
    email_id    uuid   NOT NULL,
    -- NULL while the message is in the mailbox; once it left (expunged, moved,
    -- destroyed over JMAP), a position in the change log's sequence: the
    -- MODSEQ of the expunge, for VANISHED (EARLIER) (RFC 7162 3.2.5).
    expunged    bigint,
    PRIMARY KEY (mailbox_id, uid)
);
CREATE UNIQUE INDEX imap_uids_live ON imap_uids (mailbox_id, email_id) WHERE expunged IS NULL;
CREATE INDEX imap_uids_expunged ON imap_uids (mailbox_id, expunged) WHERE expunged IS NOT NULL;

-- A membership that leaves (whoever deletes it: IMAP, JMAP, webmail, a
-- mailbox or address deleted) marks its UID expunged. Memberships that never
-- got a UID have nothing to mark, so delivery pays nothing here.
CREATE FUNCTION imap_uids_expunge() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE mta.imap_uids SET expunged = nextval('mta.changes_id_seq')
     WHERE mailbox_id = OLD.mailbox_id AND email_id = OLD.email_id AND expunged IS NULL;
    IF FOUND THEN
        UPDATE mta.imap_mailboxes SET live = live - 1 WHERE mailbox_id = OLD.mailbox_id;
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER imap_uids_expunge AFTER DELETE ON email_mailboxes
    FOR EACH ROW EXECUTE FUNCTION imap_uids_expunge();
