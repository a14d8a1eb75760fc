-- Sieve redirects leave through the outbound queue (mta/redirect.py), source
-- 'redirect': its envelope sender is the SRS address, not a VERP one.
-- mta.redirects stays as the record of the ones made before (never sent).
ALTER TABLE outbound_messages DROP CONSTRAINT outbound_messages_source_check;
ALTER TABLE outbound_messages ADD CONSTRAINT outbound_messages_source_check
    CHECK (source IN ('submission', 'api', 'system', 'webmail', 'jmap', 'redirect'));
