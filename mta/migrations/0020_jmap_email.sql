-- JMAP Email (RFC 8621 4): what Email/query filters and sorts on, kept in
-- columns so a listing never parses MIME.
--
-- bcc_addrs: drafts and sent mail carry Bcc; the bcc filter reads it.
-- body_search: words of the text body parts (and Bcc), written at delivery
--   and by Email/set and Email/import ('simple' config, as `search`: mail is
--   in every language, and a stemmer for one would mangle the others).
-- from_search: the From names and addresses as words, "@" and "." splitting
--   an address, so a `from` filter of "alice" or "example.com" is an index read.
-- sort_*: RFC 8621 4.4.2 sort keys: the base subject (RFC 5256: Re:/Fwd:
--   prefixes off), and the first From/To address, lower-cased.
ALTER TABLE emails
    ADD COLUMN bcc_addrs   jsonb    NOT NULL DEFAULT '[]'::jsonb,
    ADD COLUMN body_search tsvector,
    ADD COLUMN from_search tsvector GENERATED ALWAYS AS (
        to_tsvector('simple',
            translate(coalesce(jsonb_path_query_array(from_addrs, '$[*].*')::text, ''), '@."<>', '     '))
    ) STORED,
    ADD COLUMN sort_subject text GENERATED ALWAYS AS (
        lower(regexp_replace(subject, '^(\s*((re|fwd?|aw|sv|wg|tr)(\[[0-9]+\])?\s*:|\[fwd:[^]]*\])\s*)+', '', 'i'))
    ) STORED,
    ADD COLUMN sort_from text GENERATED ALWAYS AS (lower(coalesce(from_addrs -> 0 ->> 'email', ''))) STORED,
    ADD COLUMN sort_to text GENERATED ALWAYS AS (lower(coalesce(to_addrs -> 0 ->> 'email', ''))) STORED;

CREATE INDEX emails_body_search ON emails USING gin (body_search);
CREATE INDEX emails_from_search ON emails USING gin (from_search);
-- Thread keyword filters and collapseThreads look up an email's thread-mates.
CREATE INDEX emails_thread_id ON emails (thread_id, id);
-- Email/changes and Email/queryChanges read an account's log from a state on.
CREATE INDEX changes_object ON changes (object_id);

-- The values of one header field in a raw message (its header block only),
-- unfolded, for the Email/query `header` condition. Mail up to 256 KiB is in
-- mta.inline_blobs, so the condition reads it there instead of parsing MIME
-- in Python; latin1 never fails to decode, and the names and values asked for
-- are compared case-insensitively, as RFC 8621 4.4.1 says.
CREATE FUNCTION header_values(raw bytea, name text) RETURNS text[]
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
    SELECT coalesce(array_agg(btrim(m[1])), '{}')
      FROM regexp_matches(
               regexp_replace(
                   split_part(replace(convert_from(substring(raw FROM 1 FOR 65536), 'LATIN1'), E'\r\n', E'\n'), E'\n\n', 1),
                   E'\n[ \t]+', ' ', 'g'),
               '(?:^|\n)' || regexp_replace(name, '([^A-Za-z0-9])', '\\\1', 'g') || '[ \t]*:([^\n]*)', 'gi') AS m
$$;
