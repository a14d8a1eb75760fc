-- The IMAP server's rendered ENVELOPE and BODYSTRUCTURE of each email, as
-- Dovecot keeps them in its cache file: an email's bytes never change, so
-- what FETCH rendered once is right for ever, and a folder listing becomes
-- one indexed read instead of parsing every header again.
--
-- Written lazily by the IMAP server (mta/store/imap_cache.py) for the emails a
-- FETCH rendered, one statement per batch; delivery, imports and JMAP write
-- nothing here. Each column is NULL until a FETCH asked for that item. bytea,
-- not text: the rendered forms carry the header's 8-bit bytes as they are.
-- Gone with the email (ON DELETE CASCADE).

CREATE TABLE imap_cache (
    email_id       uuid  PRIMARY KEY REFERENCES emails (id) ON DELETE CASCADE,
    envelope       bytea,
    bodystructure  bytea
);
