-- The Overview's counts (mail received and sent per day, bounces, complaints)
-- are counted from the event log by type and time: this index answers them
-- with an index-only scan, never reading mail or the event payloads.
CREATE INDEX events_account_type ON events (account_id, type, created_at);
