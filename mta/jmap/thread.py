"""Thread/get and Thread/changes (RFC 8621 3)."""

from __future__ import annotations

from typing import Any

from common.db import Conn
from mta.jmap import methods
from mta.jmap.registry import MethodCall, register
from mta.store import threads


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
    """Each thread's email ids, oldest first (RFC 8621 3: by receivedAt)."""
    return await threads.email_ids(conn, address_id, thread_ids)


async def thread_changes(call: MethodCall) -> dict[str, Any]:
    return await methods.changes(call, "Thread")


register("Thread/get", thread_get)
register("Thread/changes", thread_changes)
