"""Protocol daemons and mail storage: SMTP, submission, DKIM, queue, mailbox store, JMAP."""
