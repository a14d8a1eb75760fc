-- The media library (issue 17): one row per upload, its bytes in the blob
-- store under their SHA-256 (two uploads of the same bytes share one blob).

CREATE TABLE media (
    id           text        PRIMARY KEY,
    filename     text        NOT NULL,
    -- Sniffed from the bytes, never taken from the client.
    type         text        NOT NULL,
    size         bigint      NOT NULL CHECK (size >= 0),
    sha256       text        NOT NULL CHECK (sha256 ~ '^[0-9a-f]{64}$'),
    width        integer,
    height       integer,
    alt          text        NOT NULL DEFAULT '',
    caption      text        NOT NULL DEFAULT '',
    folder       text        NOT NULL DEFAULT '',
    -- Where the public fetches the bytes, fixed at upload (docs/content.md, "Media").
    url          text        NOT NULL,
    uploaded_by  text        REFERENCES users (id) ON DELETE SET NULL,
    created_at   timestamptz NOT NULL,
    updated_at   timestamptz NOT NULL
);
-- Newest first, offset paging to older files.
CREATE INDEX media_list ON media (created_at DESC, id DESC);
-- The file route and the last-reference check on delete find rows by their bytes.
CREATE INDEX media_sha256 ON media (sha256);
CREATE INDEX media_folder ON media (folder, created_at DESC);
