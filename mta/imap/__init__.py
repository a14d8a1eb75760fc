"""The IMAP server (RFC 9051 IMAP4rev2, RFC 3501 IMAP4rev1) over the mailbox store JMAP uses."""
