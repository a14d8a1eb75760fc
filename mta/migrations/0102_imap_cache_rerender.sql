-- ENVELOPEs are now rendered from the header's bytes alone (mta/imap/fetch.py,
-- envelope_of). Those cached before took From/To/Cc from the store's parsed
-- columns, whose names are decoded and their white space folded: a name sent
-- as an RFC 2047 encoded word, or quoted with two spaces, came out otherwise
-- than the header says. The forms are dropped; the next FETCH of each email
-- renders and keeps them again (mta/store/imap_cache.py).
TRUNCATE imap_cache;
