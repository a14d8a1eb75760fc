"""JMAP (RFC 8620 core, RFC 8621 mail, push) over the mailbox store."""
