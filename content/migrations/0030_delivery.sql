-- Delivery (issue 18): the preview snapshots, and the index delivery lists read.

-- A preview link's snapshot of one entry (docs/content.md, "Preview"). UNLOGGED:
-- previews are invalid after a restart anyway (each process clears the table
-- when it starts), so they need no WAL; every gateway process reads the same
-- rows. Only the SHA-256 of the token is stored.
CREATE UNLOGGED TABLE preview_snapshots (
    token_hash  text        PRIMARY KEY,
    -- Creation order, for "oldest evicted first" (times can tie).
    seq         bigserial   NOT NULL,
    -- Purging the source entry removes its previews; trashing it deletes them
    -- in the same transaction (entries/service.py trash_entry).
    entry_id    text        NOT NULL REFERENCES entries (id) ON DELETE CASCADE,
    snapshot    jsonb       NOT NULL,
    size        integer     NOT NULL CHECK (size > 0),
    created_at  timestamptz NOT NULL,
    expires_at  timestamptz NOT NULL
);
CREATE INDEX preview_snapshots_age ON preview_snapshots (seq);
CREATE INDEX preview_snapshots_entry ON preview_snapshots (entry_id);

-- Published lists of one type, newest publication first (the delivery default).
CREATE INDEX entries_published ON entries (type_id, published_at DESC, id)
    WHERE deleted_at IS NULL AND status = 'published';
