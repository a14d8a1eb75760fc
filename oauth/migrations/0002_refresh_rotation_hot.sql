-- The sealed-pair index keyed on revoked_at made every rotation (which sets
-- revoked_at) a non-HOT update touching every index. Key it on token_hash
-- instead: rows enter it only in grace mode, when a pair is sealed.
DROP INDEX IF EXISTS oauth_refresh_tokens_sealed_idx;
CREATE INDEX oauth_refresh_tokens_sealed_idx
    ON oauth_refresh_tokens (token_hash) WHERE successor_sealed IS NOT NULL;
