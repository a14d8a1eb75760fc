-- Issue 11: reset and verification links must not sit readable in the
-- outbox. From here on the whole MIME message is kept only sealed
-- (AES-256-GCM under a key derived from SECRET for the purpose "mail.outbox",
-- mail/outbox/store.py); a database reader sees envelope, kind and subject,
-- never a link. The plaintext column stays for rows queued before.
ALTER TABLE outbox ADD COLUMN message_sealed text;
ALTER TABLE outbox ALTER COLUMN message DROP NOT NULL;
ALTER TABLE outbox ADD CONSTRAINT outbox_one_message
    CHECK (message IS NULL OR message_sealed IS NULL);

-- SQL cannot seal, so earlier rows that carry a one-time link are withdrawn:
-- their plaintext is erased and they are never sent (a row with neither
-- message is not picked up). Notices carry no secret and stay as they were.
UPDATE outbox
   SET message = NULL,
       last_error = 'withdrawn by migration 0051: its link was stored unsealed; ask for a new one'
 WHERE kind IN ('verify_email', 'password_reset') AND message IS NOT NULL;

-- Every link still live was readable in that plaintext, so it stops working;
-- the person asks for a new one (which arrives sealed).
UPDATE account_tokens
   SET expires_at = now()
 WHERE used_at IS NULL AND expires_at > now();
