-- The Overview's counts (mail received and sent per day, bounces, complaints)
-- never read mail: closed days come from event_days, a per-account, per-day,
-- per-type count rolled up once a day from the event log; the days after
-- event_rollup.rolled_until (today, mostly) are counted live with an
-- index-only scan of events_account_type.
CREATE INDEX events_account_type ON events (account_id, type, created_at);
-- The rollup reads one day of every account at a time. Events are appended in
-- time order, so a BRIN index finds a day for next to no upkeep on insert
-- (a b-tree here cost inbound delivery measurably).
CREATE INDEX events_created ON events USING brin (created_at);

CREATE TABLE event_days (
    account_id  uuid    NOT NULL REFERENCES mail.accounts (id) ON DELETE CASCADE,
    day         date    NOT NULL,
    type        text    NOT NULL,
    count       integer NOT NULL,
    PRIMARY KEY (account_id, type, day)
);

-- One row: every day before rolled_until is in event_days (UTC days).
CREATE TABLE event_rollup (
    singleton     boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    rolled_until  date    NOT NULL
);
INSERT INTO event_rollup (rolled_until) VALUES ('-infinity');
