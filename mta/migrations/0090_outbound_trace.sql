-- The request id of what queued the message (common/logs.py): the worker names
-- it in the Received field it adds, so a message can be traced to its request.
ALTER TABLE outbound_messages ADD COLUMN trace_id text;

-- The request id an event was recorded under: the mail webhook deliveries it
-- fans out to run under it (mail/webhooks/delivery.py).
ALTER TABLE events ADD COLUMN request_id text;
