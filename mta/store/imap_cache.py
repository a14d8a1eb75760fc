"""The IMAP server's rendered ENVELOPE and BODYSTRUCTURE per email (migration 0101).

The only module that writes ``mta.imap_cache``. FETCH reads the cached forms
with the rows it lists (``imap_uids.message_rows``, a LEFT JOIN) and hands
back what it had to render, which :func:`keep` writes in one statement. An
email never changes, so an entry is never updated once set; it goes with the
email (ON DELETE CASCADE).
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping

import psycopg2.errors

from common.db import Conn, execute

# email id -> (ENVELOPE, BODYSTRUCTURE), either None when not rendered.
Rendered = Mapping[str, tuple[bytes | None, bytes | None]]

_KEEP = """
    INSERT INTO mta.imap_cache (email_id, envelope, bodystructure)
    SELECT u.id, u.envelope, u.bodystructure
      FROM unnest(%s::uuid[], %s::bytea[], %s::bytea[]) AS u (id, envelope, bodystructure)
     WHERE EXISTS (SELECT 1 FROM mta.emails e WHERE e.id = u.id)
    ON CONFLICT (email_id) DO UPDATE
       SET envelope = coalesce(mta.imap_cache.envelope, excluded.envelope),
           bodystructure = coalesce(mta.imap_cache.bodystructure, excluded.bodystructure)
     WHERE mta.imap_cache.envelope IS NULL AND excluded.envelope IS NOT NULL
        OR mta.imap_cache.bodystructure IS NULL AND excluded.bodystructure IS NOT NULL
"""


async def keep(conn: Conn, rendered: Rendered) -> None:
    """Cache what a FETCH rendered (one multi-row statement). An email destroyed
    meanwhile is skipped: the cache is an optimisation, never a reason to fail."""
    if not rendered:
        return
    ids = sorted(rendered)  # one lock order for concurrent writers
    # Destroyed between the EXISTS and the insert: rendered again next time.
    with contextlib.suppress(psycopg2.errors.ForeignKeyViolation):
        await execute(
            conn,
            _KEEP,
            (
                ids,
                [rendered[i][0] for i in ids],
                [rendered[i][1] for i in ids],
            ),
        )


async def forget(conn: Conn, address_id: str) -> int:
    """Drop the address's cached forms (they are rendered again by the next FETCH):
    what benchmarks/imap.py does to time a first, cold listing again."""
    return await execute(
        conn,
        "DELETE FROM mta.imap_cache c USING mta.emails e"
        " WHERE e.id = c.email_id AND e.address_id = %s",
        (address_id,),
    )
