-- Raw MIME of deleted mail must leave the disk too ("delete an address, with its
-- mail"). A deleted email's (or redirect's) blob id becomes a candidate; the
-- mta.collect_blobs job deletes the blob once no email or redirect refers to it.
CREATE TABLE blob_candidates (
    blob_id     text        PRIMARY KEY,
    created_at  timestamptz NOT NULL DEFAULT now()
);

CREATE FUNCTION blob_candidate() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO mta.blob_candidates (blob_id) VALUES (OLD.blob_id) ON CONFLICT DO NOTHING;
    RETURN OLD;
END $$;
CREATE TRIGGER emails_blob_candidate AFTER DELETE ON emails
    FOR EACH ROW EXECUTE FUNCTION blob_candidate();
CREATE TRIGGER redirects_blob_candidate AFTER DELETE ON redirects
    FOR EACH ROW EXECUTE FUNCTION blob_candidate();
