-- Resend's last_event `suppressed`: a message none of whose recipients was
-- attempted because each is on the account's suppression list (its recipients
-- already had the status; the message was reported `failed`).
ALTER TABLE outbound_messages DROP CONSTRAINT outbound_messages_status_check;
ALTER TABLE outbound_messages ADD CONSTRAINT outbound_messages_status_check CHECK (status IN (
    'scheduled', 'queued', 'sent', 'delivered', 'delivery_delayed',
    'bounced', 'failed', 'canceled', 'complained', 'suppressed'));
