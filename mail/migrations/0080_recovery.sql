-- Mailbox recovery (mail/recovery/): one-time links sent to an address's
-- recovery address, so a mailbox owner who is not a panel user can set a new
-- password. Only the SHA-256 of a token is kept; a token is used once (one
-- conditional UPDATE) and expires after 30 minutes.
CREATE TABLE recovery_tokens (
    id          uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
    address_id  uuid        NOT NULL REFERENCES addresses (id) ON DELETE CASCADE,
    token_hash  text        NOT NULL UNIQUE,
    created_at  timestamptz NOT NULL,
    expires_at  timestamptz NOT NULL,
    used_at     timestamptz
);
CREATE INDEX recovery_tokens_address ON recovery_tokens (address_id) WHERE used_at IS NULL;

-- "Does this domain offer recovery": addresses that have a recovery address.
CREATE INDEX addresses_recoverable ON addresses (domain_id) WHERE recovery_email IS NOT NULL;
