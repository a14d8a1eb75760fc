-- Hosted mail domains, their DKIM keys and their addresses (mailboxes).
-- Read by the MTA (mta/) under exactly these table and column names:
--   domains.name, domains.fallback_domain_id, addresses.local_part,
--   addresses.password_hash, addresses.quota_bytes, dkim_keys.* (active key).

CREATE TABLE domains (
    id                   uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
    account_id           uuid        NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    -- The ASCII (IDNA A-label) form, lower-cased, no trailing dot (mail/domains/names.py).
    name                 text        NOT NULL CHECK (name = lower(name) AND length(name) <= 253),
    -- Mail for a local part that does not exist here goes to the same local part
    -- at this domain instead of bouncing. Loops are refused by the panel.
    fallback_domain_id   uuid        REFERENCES domains (id) ON DELETE SET NULL,
    description          text        NOT NULL DEFAULT '' CHECK (length(description) <= 200),
    dmarc_policy         text        NOT NULL DEFAULT 'quarantine'
                                     CHECK (dmarc_policy IN ('none', 'quarantine', 'reject')),
    -- Quota given to new addresses when the request names none (0 = unlimited).
    default_quota_bytes  bigint      NOT NULL DEFAULT 1073741824 CHECK (default_quota_bytes >= 0),
    -- The last DNS check: its overall status and what each lookup answered,
    -- keyed "<TYPE> <name>" (null = the lookup failed). Statuses per record are
    -- computed against the current expected values when read (mail/dns/status.py).
    dns_status           text        NOT NULL DEFAULT 'unchecked',
    dns_found            jsonb       NOT NULL DEFAULT '{}'::jsonb,
    dns_checked_at       timestamptz,
    created_at           timestamptz NOT NULL,
    updated_at           timestamptz NOT NULL,
    CONSTRAINT domains_name_key UNIQUE (name),
    CONSTRAINT domains_fallback_not_self CHECK (fallback_domain_id IS DISTINCT FROM id)
);
CREATE INDEX domains_account ON domains (account_id, created_at);
CREATE INDEX domains_fallback ON domains (fallback_domain_id) WHERE fallback_domain_id IS NOT NULL;
CREATE INDEX domains_dns_checked ON domains (dns_checked_at NULLS FIRST);

-- Private keys are sealed with common.crypto.Sealer(SECRET, "mail.dkim") and
-- open to dkimpy's own formats: PKCS#1 PEM for rsa-sha256, the base64 32-byte
-- seed for ed25519-sha256. public_key_b64 is the p= value of the DNS record.
CREATE TABLE dkim_keys (
    id                  uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
    domain_id           uuid        NOT NULL REFERENCES domains (id) ON DELETE CASCADE,
    selector            text        NOT NULL CHECK (selector ~ '^[a-z0-9][a-z0-9-]{0,62}$'),
    algorithm           text        NOT NULL CHECK (algorithm IN ('rsa-sha256', 'ed25519-sha256')),
    private_key_sealed  text        NOT NULL,
    public_key_b64      text        NOT NULL,
    -- The signing selector: at most one active key per domain.
    active              boolean     NOT NULL DEFAULT false,
    created_at          timestamptz NOT NULL,
    CONSTRAINT dkim_keys_selector_key UNIQUE (domain_id, selector)
);
CREATE UNIQUE INDEX dkim_keys_one_active ON dkim_keys (domain_id) WHERE active;

CREATE TABLE addresses (
    id              uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
    domain_id       uuid        NOT NULL REFERENCES domains (id) ON DELETE CASCADE,
    -- Lower-cased dot-atom (mail/addresses/localpart.py); the address is
    -- local_part || '@' || domains.name.
    local_part      text        NOT NULL
                                CHECK (local_part = lower(local_part) AND length(local_part) BETWEEN 1 AND 64),
    display_name    text        NOT NULL DEFAULT '' CHECK (length(display_name) <= 100),
    -- argon2id (common.passwords), checked by SMTP AUTH and webmail sign-in.
    password_hash   text        NOT NULL,
    -- Mailbox size limit in bytes; 0 means unlimited (mailcow's and Stalwart's convention).
    quota_bytes     bigint      NOT NULL DEFAULT 1073741824 CHECK (quota_bytes >= 0),
    -- Where a mailbox password reset is sent (the recovery routes).
    recovery_email  text,
    created_at      timestamptz NOT NULL,
    updated_at      timestamptz NOT NULL,
    CONSTRAINT addresses_local_part_key UNIQUE (domain_id, local_part)
);
CREATE INDEX addresses_domain_created ON addresses (domain_id, created_at);
