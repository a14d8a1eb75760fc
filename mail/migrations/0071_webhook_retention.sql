-- The hourly sweep drops finished deliveries (and their attempts, by cascade)
-- past the retention window (mail/webhooks/store.py sweep): found by age alone.
CREATE INDEX webhook_deliveries_finished ON webhook_deliveries (event_created_at)
    WHERE status IN ('delivered', 'failed');
