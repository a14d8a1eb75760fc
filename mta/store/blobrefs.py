"""Which stored blobs no row of the mta refers to any more."""

from __future__ import annotations

from common.db import Conn, execute, fetch_all


async def unreferenced(conn: Conn, limit: int) -> list[str]:
    """Candidate blob ids that no email and no redirect uses (safe to delete)."""
    rows = await fetch_all(
        conn,
        """
        SELECT c.blob_id FROM mta.blob_candidates c
         WHERE NOT EXISTS (SELECT 1 FROM mta.emails e WHERE e.blob_id = c.blob_id)
           AND NOT EXISTS (SELECT 1 FROM mta.redirects r WHERE r.blob_id = c.blob_id)
           AND NOT EXISTS (SELECT 1 FROM mta.uploads u WHERE u.blob_id = c.blob_id)
         ORDER BY c.created_at LIMIT %s
        """,
        (limit,),
    )
    return [r["blob_id"] for r in rows]


async def forget(conn: Conn, blob_ids: list[str]) -> None:
    """Drop candidates: deleted, or referenced again (they come back on the next delete)."""
    await execute(conn, "DELETE FROM mta.blob_candidates WHERE blob_id = ANY(%s)", (blob_ids,))


async def referenced_candidates(conn: Conn) -> int:
    return await execute(
        conn,
        """
        DELETE FROM mta.blob_candidates c
         WHERE EXISTS (SELECT 1 FROM mta.emails e WHERE e.blob_id = c.blob_id)
            OR EXISTS (SELECT 1 FROM mta.uploads u WHERE u.blob_id = c.blob_id)
        """,
    )
