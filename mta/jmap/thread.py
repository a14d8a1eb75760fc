"""Thread/get and Thread/changes (RFC 8621 3)."""

from __future__ import annotations

from typing import Any

from common.db import Conn, fetch_all
from mta.jmap import methods
from mta.jmap.registry import MethodCall, register


async def thread_get(call: MethodCall) -> dict[str, Any]:
    account = call.account
    ids = methods.get_ids(call)
    methods.properties(call, ("id", "emailIds"))
    if ids is None:
        call.fail("requestTooLarge", "name the threads to get")
    wanted = [i for i in ids if methods.is_uuid(i)]
    async with call.connection() as conn:
        state = await methods.state(conn, account.address_id, "Thread")
        found = await email_ids(conn, account.address_id, wanted)
    return {
        "accountId": account.id,
        "state": state,
        "list": [{"id": i, "emailIds": found[i]} for i in ids if i in found],
        "notFound": [i for i in ids if i not in found],
    }


async def email_ids(conn: Conn, address_id: str, thread_ids: list[str]) -> dict[str, list[str]]:
    """Each thread's email ids, oldest first (RFC 8621 3: by receivedAt), by emails_thread."""
    rows = await fetch_all(
        conn,
        """
        SELECT e.thread_id::text AS thread_id,
               array_agg(e.id::text ORDER BY e.received_at, e.id) AS email_ids
          FROM mta.emails e
         WHERE e.thread_id = ANY(%s::uuid[]) AND e.address_id = %s
         GROUP BY e.thread_id
        """,
        (thread_ids, address_id),
    )
    return {r["thread_id"]: r["email_ids"] for r in rows}


async def thread_changes(call: MethodCall) -> dict[str, Any]:
    return await methods.changes(call, "Thread")


register("Thread/get", thread_get)
register("Thread/changes", thread_changes)
