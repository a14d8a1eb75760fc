-- The request id of whatever enqueued a job (common/logs.py): its log lines,
-- and the mail and webhooks it causes, carry the same id.
ALTER TABLE jobs ADD COLUMN request_id text;

-- /metrics counts dead jobs at every scrape: only they are in this index.
CREATE INDEX jobs_dead ON jobs (finished_at) WHERE state = 'dead';
