"""The per-account change log behind JMAP state strings (RFC 8620 5.1, 5.2).

The only module that writes ``mta.changes`` and ``mta.changes_pruned``:
statements of other store modules that log a change in the same round trip
(delivery's insert, a thread made or dropped) take :data:`INSERT` from here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from common.db import Conn, execute, fetch_all, fetch_one, fetch_val
from common.records import Record

# The head of every insert into the log; followed by a SELECT of
# (address_id, type_name, object_id, change, created_at).
INSERT = "INSERT INTO mta.changes (address_id, type_name, object_id, change, created_at)"


@dataclass(frozen=True)
class Change(Record):
    id: int
    object_id: str
    change: str


async def record(
    conn: Conn,
    address_id: str,
    type_name: str,
    object_ids: Sequence[str],
    change: str,
    now: datetime,
) -> None:
    if not object_ids:
        return
    await execute(
        conn,
        f"{INSERT} SELECT %s, %s, unnest(%s::uuid[]), %s, %s",
        (address_id, type_name, list(object_ids), change, now),
    )


async def state(conn: Conn, address_id: str, type_name: str) -> str:
    """The account's current state for one type: the id of its latest change, or "0"."""
    value = await fetch_val(
        conn,
        "SELECT max(id) FROM mta.changes WHERE address_id = %s AND type_name = %s",
        (address_id, type_name),
    )
    return str(value or 0)


async def states(conn: Conn, address_id: str) -> dict[str, str]:
    """Every pushable type's state for one account (one backward index scan per type).

    ``EmailDelivery`` is the latest Email created (RFC 8620 7.1: new mail only).
    """
    row = await fetch_one(
        conn,
        """
        SELECT
          (SELECT max(id) FROM mta.changes WHERE address_id = %(a)s AND type_name = 'Email') AS "Email",
          (SELECT max(id) FROM mta.changes WHERE address_id = %(a)s AND type_name = 'Mailbox') AS "Mailbox",
          (SELECT max(id) FROM mta.changes WHERE address_id = %(a)s AND type_name = 'Thread') AS "Thread",
          (SELECT max(id) FROM mta.changes WHERE address_id = %(a)s AND type_name = 'Identity') AS "Identity",
          (SELECT max(id) FROM mta.changes WHERE address_id = %(a)s
              AND type_name = 'VacationResponse') AS "VacationResponse",
          (SELECT max(id) FROM mta.changes WHERE address_id = %(a)s AND type_name = 'Email'
              AND change = 'created') AS "EmailDelivery",
          (SELECT max(id) FROM mta.changes WHERE address_id = %(a)s
              AND type_name = 'EmailSubmission') AS "EmailSubmission"
        """,
        {"a": address_id},
    )
    assert row is not None
    return {name: str(value or 0) for name, value in row.items()}


async def pruned_upto(conn: Conn, address_id: str) -> int | None:
    """The change id the account's history starts after (None: never pruned)."""
    value = await fetch_val(
        conn, "SELECT upto FROM mta.changes_pruned WHERE address_id = %s", (address_id,)
    )
    return None if value is None else int(value)


async def between(
    conn: Conn, address_id: str, type_name: str, since: int, upto: int, limit: int
) -> list[Change]:
    """The type's changes after ``since`` up to ``upto``, oldest first, at most ``limit``."""
    rows = await fetch_all(
        conn,
        """
        SELECT id, object_id::text AS object_id, change FROM mta.changes
         WHERE address_id = %s AND type_name = %s AND id > %s AND id <= %s
         ORDER BY id LIMIT %s
        """,
        (address_id, type_name, since, upto, limit),
    )
    return [Change.from_row(row) for row in rows]


async def changed_ids(
    conn: Conn, address_id: str, type_name: str, since: int, upto: int
) -> set[str]:
    """Ids of the type's objects changed after ``since`` up to ``upto``."""
    rows = await fetch_all(
        conn,
        """
        SELECT DISTINCT object_id::text AS object_id FROM mta.changes
         WHERE address_id = %s AND type_name = %s AND id > %s AND id <= %s
        """,
        (address_id, type_name, since, upto),
    )
    return {r["object_id"] for r in rows}


async def emails_changed_since(conn: Conn, address_id: str, since: int) -> list[str]:
    """Emails changed after ``since`` and their thread-mates (whose collapse or thread
    keyword filters may have moved with them), sorted: Email/queryChanges' removed."""
    rows = await fetch_all(
        conn,
        """
        WITH changed AS (
            SELECT DISTINCT object_id AS id FROM mta.changes
             WHERE address_id = %(a)s AND type_name = 'Email' AND id > %(since)s
        ), threads AS (
            SELECT object_id AS id FROM mta.changes
             WHERE address_id = %(a)s AND type_name = 'Thread' AND id > %(since)s
            UNION SELECT e.thread_id FROM mta.emails e JOIN changed c ON c.id = e.id
        )
        SELECT id::text FROM changed
        UNION SELECT e.id::text FROM mta.emails e JOIN threads t ON t.id = e.thread_id
        """,
        {"a": address_id, "since": since},
    )
    return sorted(r["id"] for r in rows)


async def prune(conn: Conn, before: datetime) -> int:
    """Drop change rows older than ``before``, remembering per account where history starts."""
    await execute(
        conn,
        """
        INSERT INTO mta.changes_pruned (address_id, upto)
        SELECT address_id, max(id) FROM mta.changes WHERE created_at < %s GROUP BY address_id
        ON CONFLICT (address_id) DO UPDATE SET upto = greatest(mta.changes_pruned.upto, EXCLUDED.upto)
        """,
        (before,),
    )
    # Keep each account's latest row of every type: it is that type's state string.
    return await execute(
        conn,
        """
        DELETE FROM mta.changes c WHERE c.created_at < %s
           AND c.id < (SELECT max(l.id) FROM mta.changes l
                        WHERE l.address_id = c.address_id AND l.type_name = c.type_name)
        """,
        (before,),
    )
