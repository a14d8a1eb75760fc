-- The From addresses alone, lower-cased, as a JSON array: Email/query's
-- `from` with a whole address ("ann@example.com", the "more from this
-- sender" search) is a containment test on this GIN index, instead of
-- intersecting the word lists of "ann", "example" and "com", which at
-- 100,000 messages are long (every address ends in a common domain).
ALTER TABLE emails ADD COLUMN from_emails jsonb GENERATED ALWAYS AS (
    lower(coalesce(jsonb_path_query_array(from_addrs, '$[*].email')::text, '[]'))::jsonb
) STORED;
CREATE INDEX emails_from_emails ON emails USING gin (from_emails jsonb_path_ops);
