"""Mail transfers: import mail from another IMAP server into an address (docs/mail.md#transfers)."""
