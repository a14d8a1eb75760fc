"""Email/changes (RFC 8620 5.2) over the store's change log (mta.changes)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from common.db import Conn, fetch_all
from mta.jmap.email.errors import MethodError
from mta.store import changes as log

# Rows read per call when the client sets no maxChanges.
DEFAULT_MAX_CHANGES = 5000


async def changes_since(
    conn: Conn, account_id: str, type_name: str, args: Mapping[str, Any]
) -> dict[str, Any]:
    """/changes of one type: created, updated, destroyed ids since ``sinceState``.

    The log is never pruned today, so any state this account ever had can be
    answered; a state it never had (ahead of the log, or not a number) is
    cannotCalculateChanges, as RFC 8620 asks when history is gone. An object
    created and destroyed since the state is left out; created then updated is
    created. With maxChanges the answer stops at a log row such that at most
    that many ids are given, and hasMoreChanges says to ask again from newState.
    """
    since = args.get("sinceState")
    if not isinstance(since, str):
        raise MethodError("invalidArguments", "sinceState is a string")
    max_changes = args.get("maxChanges")
    if max_changes is not None and (
        not isinstance(max_changes, int) or isinstance(max_changes, bool) or max_changes < 1
    ):
        raise MethodError("invalidArguments", "maxChanges is a positive UnsignedInt")
    state = await log.state(conn, account_id, type_name)
    if not since.isdigit() or int(since) > int(state):
        raise MethodError("cannotCalculateChanges", f"unknown state {since!r}")
    cap = max_changes or DEFAULT_MAX_CHANGES
    rows = await fetch_all(
        conn,
        """
        SELECT id, object_id::text AS object_id, change FROM mta.changes
         WHERE address_id = %s AND type_name = %s AND id > %s
         ORDER BY id LIMIT %s
        """,
        (account_id, type_name, int(since), cap * 4 + 1),
    )
    seen: dict[str, list[str]] = {}
    new_state = since
    more = len(rows) > cap * 4
    for row in rows[: cap * 4]:
        if row["object_id"] not in seen and len(seen) >= cap:
            more = True
            break
        seen.setdefault(row["object_id"], []).append(row["change"])
        new_state = str(row["id"])
    created, updated, destroyed = [], [], []
    for object_id, kinds in seen.items():
        if kinds[0] == "created":
            if "destroyed" not in kinds:
                created.append(object_id)
        elif "destroyed" in kinds:
            destroyed.append(object_id)
        else:
            updated.append(object_id)
    return {
        "accountId": account_id,
        "oldState": since,
        "newState": new_state if more else state,
        "hasMoreChanges": more,
        "created": created,
        "updated": updated,
        "destroyed": destroyed,
    }


async def email_changes(
    _ctx: object, conn: Conn, account_id: str, args: Mapping[str, Any]
) -> dict[str, Any]:
    return await changes_since(conn, account_id, "Email", args)
