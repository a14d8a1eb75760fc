-- Token buckets (GCRA) shared by every gateway process (common/ratelimit.py,
-- RateLimiter.take): one row per key holding its theoretical arrival time in
-- microseconds since the epoch. A row whose time has passed is a full bucket,
-- exactly as a missing row is, so the sweep may delete it at any moment.
-- UNLOGGED for the same reason as rate_limits: worthless after a crash.
CREATE UNLOGGED TABLE rate_buckets (
    key  text   PRIMARY KEY,
    tat  bigint NOT NULL
);
CREATE INDEX rate_buckets_tat ON rate_buckets (tat);
