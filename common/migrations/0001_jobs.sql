-- The job queue shared by every service (see common/jobs.py).
CREATE TABLE jobs (
    id            bigserial PRIMARY KEY,
    kind          text        NOT NULL,
    payload       jsonb       NOT NULL DEFAULT '{}'::jsonb,
    run_at        timestamptz NOT NULL,
    -- Idempotency key: a second enqueue with the same key is a no-op.
    key           text        UNIQUE,
    state         text        NOT NULL DEFAULT 'pending'
                  CHECK (state IN ('pending', 'running', 'done', 'dead')),
    attempts      integer     NOT NULL DEFAULT 0,
    max_attempts  integer     NOT NULL DEFAULT 8 CHECK (max_attempts > 0),
    last_error    text,
    locked_by     text,
    locked_until  timestamptz,
    created_at    timestamptz NOT NULL DEFAULT now(),
    finished_at   timestamptz
);

-- Workers look only at due pending jobs and at running jobs whose lease lapsed.
CREATE INDEX jobs_pending_due ON jobs (run_at) WHERE state = 'pending';
CREATE INDEX jobs_running_lease ON jobs (locked_until) WHERE state = 'running';
CREATE INDEX jobs_kind_state ON jobs (kind, state);
