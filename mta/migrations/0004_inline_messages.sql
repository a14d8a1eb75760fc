-- The raw MIME of messages up to 256 KiB (nearly all mail) is kept here, written
-- in the delivery transaction itself: the batch's one WAL flush makes it durable
-- with its rows, where the file store cost two fsyncs (file and directory) and a
-- thread hop per message. Larger messages stay in the blob store
-- (common/blobs.py). Same content-addressed ids either way (mta/store/raw.py).
CREATE TABLE inline_blobs (
    blob_id     text        PRIMARY KEY CHECK (blob_id ~ '^[0-9a-f]{64}$'),
    data        bytea       NOT NULL,
    created_at  timestamptz NOT NULL
);
