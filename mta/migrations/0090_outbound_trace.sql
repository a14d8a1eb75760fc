-- The request id of what queued the message (common/logs.py): the worker names
-- it in the Received field it adds, so a message can be traced to its request.
ALTER TABLE outbound_messages ADD COLUMN trace_id text;
