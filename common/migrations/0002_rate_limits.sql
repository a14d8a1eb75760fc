-- Fixed-window request counters shared by every gateway process (common/ratelimit.py).
-- UNLOGGED: counters are worth nothing after a crash, and skipping the WAL
-- keeps a hit to one cheap upsert.
CREATE UNLOGGED TABLE rate_limits (
    key           text        NOT NULL,
    window_start  timestamptz NOT NULL,
    hits          integer     NOT NULL,
    PRIMARY KEY (key, window_start)
);
CREATE INDEX rate_limits_window ON rate_limits (window_start);
