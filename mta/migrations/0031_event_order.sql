-- Events written at one instant (one transaction, or a clock that did not
-- move) keep the order they were written in: email.sent before
-- email.delivered when one attempt writes both.
ALTER TABLE events ADD COLUMN seq bigint GENERATED ALWAYS AS IDENTITY;
CREATE INDEX events_email_seq ON events (email_id, created_at, seq) WHERE email_id IS NOT NULL;
DROP INDEX events_email;
