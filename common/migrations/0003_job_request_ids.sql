-- The request id of whatever enqueued a job (common/logs.py): its log lines,
-- and the mail and webhooks it causes, carry the same id.
ALTER TABLE jobs ADD COLUMN request_id text;
