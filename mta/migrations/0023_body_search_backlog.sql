-- Mail stored before 0020 has no body_search yet; the mta.index_bodies job
-- fills it in batches, finding what is left from this index alone.
CREATE INDEX emails_body_unindexed ON emails (received_at DESC) WHERE body_search IS NULL;
