"""Mailboxes (JMAP Mailbox, RFC 8621 2): folders of an address, with roles and counts."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from common.db import Conn, execute, fetch_all, fetch_one, fetch_val
from common.records import Record
from mta.store import changes

# (name, role, sort_order): the folders every address starts with.
DEFAULT_MAILBOXES: tuple[tuple[str, str, int], ...] = (
    ("Inbox", "inbox", 0),
    ("Drafts", "drafts", 10),
    ("Sent", "sent", 20),
    ("Archive", "archive", 30),
    ("Junk", "junk", 40),
    ("Trash", "trash", 50),
)
# Hierarchy separator in folder paths given to fileinto ("Lists/python").
SEPARATOR = "/"
MAX_DEPTH = 10

COLUMNS = """id, address_id, parent_id, name, role, sort_order, total_emails, unread_emails,
             is_subscribed, created_at"""


@dataclass(frozen=True)
class Folder(Record):
    """A mailbox of an address with its counts, as the panel and webmail show it."""

    id: str
    address_id: str
    parent_id: str | None
    name: str
    role: str | None
    sort_order: int
    total_emails: int
    unread_emails: int
    is_subscribed: bool
    created_at: datetime


async def create_default_mailboxes(conn: Conn, address_id: str, now: datetime) -> None:
    """Create the missing default folders of an address (idempotent).

    The addresses code calls this in the transaction that creates an address;
    delivery calls it too, so an address created before it existed still works.
    """
    rows = await fetch_all(
        conn,
        """
        INSERT INTO mta.mailboxes (address_id, name, role, sort_order, created_at)
        SELECT %s, d.name, d.role, d.sort_order, %s
          FROM unnest(%s::text[], %s::text[], %s::int[]) AS d(name, role, sort_order)
        ON CONFLICT DO NOTHING
        RETURNING id
        """,
        (
            address_id,
            now,
            [m[0] for m in DEFAULT_MAILBOXES],
            [m[1] for m in DEFAULT_MAILBOXES],
            [m[2] for m in DEFAULT_MAILBOXES],
        ),
    )
    await changes.record(conn, address_id, "Mailbox", [str(r["id"]) for r in rows], "created", now)


async def by_role(conn: Conn, address_id: str, role: str) -> dict[str, Any] | None:
    return await fetch_one(
        conn,
        f"SELECT {COLUMNS} FROM mta.mailboxes WHERE address_id = %s AND role = %s",
        (address_id, role),
    )


async def role_ids(conn: Conn, address_id: str) -> dict[str, str]:
    rows = await fetch_all(
        conn,
        "SELECT role, id FROM mta.mailboxes WHERE address_id = %s AND role IS NOT NULL",
        (address_id,),
    )
    return {r["role"]: str(r["id"]) for r in rows}


async def ensure_defaults(conn: Conn, address_id: str, now: datetime) -> dict[str, str]:
    """Role -> mailbox id, creating the default folders first if any is missing."""
    roles = await role_ids(conn, address_id)
    if len(roles) < len(DEFAULT_MAILBOXES):
        await create_default_mailboxes(conn, address_id, now)
        roles = await role_ids(conn, address_id)
    return roles


def split_path(path: str) -> list[str]:
    parts = [p.strip() for p in path.split(SEPARATOR)]
    if not path.strip() or any(not p for p in parts) or len(parts) > MAX_DEPTH:
        raise ValueError(f"invalid folder name {path!r}")
    if any(len(p) > 255 for p in parts):
        raise ValueError("folder names are at most 255 characters")
    return parts


async def find_path(conn: Conn, address_id: str, path: str) -> str | None:
    """The id of the folder at ``path`` ("Inbox" or "Lists/python"), or None."""
    parent: str | None = None
    for part in split_path(path):
        parent = await fetch_val(
            conn,
            """
            SELECT id FROM mta.mailboxes
             WHERE address_id = %s AND parent_id IS NOT DISTINCT FROM %s AND lower(name) = lower(%s)
            """,
            (address_id, parent, part),
        )
        if parent is None:
            return None
        parent = str(parent)
    return parent


async def create_path(conn: Conn, address_id: str, path: str, now: datetime) -> str:
    """The id of the folder at ``path``, creating it and its parents when missing."""
    parent: str | None = None
    for part in split_path(path):
        row = await fetch_one(
            conn,
            """
            WITH found AS (
                SELECT id FROM mta.mailboxes
                 WHERE address_id = %(a)s AND parent_id IS NOT DISTINCT FROM %(p)s
                   AND lower(name) = lower(%(n)s)
            ), made AS (
                INSERT INTO mta.mailboxes (address_id, parent_id, name, sort_order, created_at)
                SELECT %(a)s, %(p)s, %(n)s, 100, %(now)s WHERE NOT EXISTS (SELECT 1 FROM found)
                ON CONFLICT DO NOTHING
                RETURNING id
            )
            SELECT id, false AS created FROM found UNION ALL SELECT id, true FROM made
            """,
            {"a": address_id, "p": parent, "n": part, "now": now},
        )
        if row is None:  # lost a race with a concurrent create: read the winner's row
            found = await find_path(conn, address_id, path)
            if found is None:
                raise ValueError(f"could not create folder {path!r}")
            return found
        if row["created"]:
            await changes.record(conn, address_id, "Mailbox", [str(row["id"])], "created", now)
        parent = str(row["id"])
    assert parent is not None
    return parent


async def list_for_address(conn: Conn, address_id: str) -> list[dict[str, Any]]:
    """Every folder of an address with its counts, parents before children.

    Raw rows, for delivery's and the store tests' own reads; what leaves mta
    is :class:`Folder` (``folders`` below, through mta/mailstore.py).
    """
    return await fetch_all(
        conn,
        f"""
        SELECT {COLUMNS} FROM mta.mailboxes WHERE address_id = %s
         ORDER BY sort_order, lower(name), id
        """,
        (address_id,),
    )


async def folders(conn: Conn, address_id: str) -> list[Folder]:
    """The address's folders as records, in display order."""
    return [Folder.from_row(row) for row in await list_for_address(conn, address_id)]


async def delete_folder(conn: Conn, address_id: str, folder_id: str, now: datetime) -> str:
    """Delete a folder of the address (in the caller's transaction); what happened.

    "deleted", or why not: "missing" (no such folder of this address),
    "special" (a folder with a role: Inbox, Sent... stay), "has_children",
    "not_empty" (JMAP's mailboxHasEmail: mail is moved out or deleted first,
    never lost as a side effect).
    """
    row = await fetch_one(
        conn,
        """
        SELECT m.role, m.total_emails,
               EXISTS (SELECT 1 FROM mta.mailboxes c WHERE c.parent_id = m.id) AS has_child
          FROM mta.mailboxes m WHERE m.id = %s AND m.address_id = %s FOR UPDATE
        """,
        (folder_id, address_id),
    )
    if row is None:
        return "missing"
    if row["role"] is not None:
        return "special"
    if row["has_child"]:
        return "has_children"
    if row["total_emails"]:
        return "not_empty"
    await fetch_val(conn, "DELETE FROM mta.mailboxes WHERE id = %s RETURNING id", (folder_id,))
    await changes.record(conn, address_id, "Mailbox", [folder_id], "destroyed", now)
    return "deleted"


# -- what JMAP (and IMAP next) reads and writes ---------------------------------

# A delivery batch's counts added to its mailboxes in one statement
# (mta/store/counters.py): parameters %(boxes)s, %(totals)s, %(unread)s.
# Count deltas added to mailboxes, from ``{source}``: rows (id, total, unread)
# (mta/store/counters.py applies a delivery batch's with it).
ADD_COUNTS_FROM = """
        UPDATE mta.mailboxes AS m
           SET total_emails = m.total_emails + d.total,
               unread_emails = m.unread_emails + d.unread
          FROM {source} AS d
         WHERE m.id = d.id
"""


@dataclass(frozen=True)
class Mailbox(Record):
    """A mailbox as a protocol server lists it (ids as text)."""

    id: str
    parent_id: str | None
    name: str
    role: str | None
    sort_order: int
    total_emails: int
    unread_emails: int
    is_subscribed: bool


@dataclass(frozen=True)
class Place(Record):
    """Where a mailbox sits, read under its row lock before a change."""

    id: str
    name: str
    parent_id: str | None
    role: str | None


@dataclass(frozen=True)
class Contents(Record):
    """What decides whether a mailbox may be destroyed, read under its row lock."""

    id: str
    total_emails: int
    has_child: bool


async def listing(conn: Conn, address_id: str) -> list[Mailbox]:
    """The address's mailboxes in display order."""
    rows = await fetch_all(
        conn,
        """
        SELECT m.id::text AS id, m.parent_id::text AS parent_id, m.name, m.role, m.sort_order,
               m.total_emails, m.unread_emails, m.is_subscribed
          FROM mta.mailboxes m WHERE m.address_id = %s
         ORDER BY m.sort_order, lower(m.name), m.id
        """,
        (address_id,),
    )
    return [Mailbox.from_row(row) for row in rows]


async def thread_counts(conn: Conn, address_id: str) -> dict[str, tuple[int, int]]:
    """Mailbox id -> (threads, threads with unread mail), from mta.mailbox_threads
    (one row per mailbox and thread, kept by the membership triggers, migration 0060)."""
    rows = await fetch_all(
        conn,
        """
        SELECT m.id::text AS id,
               (SELECT count(*) FROM mta.mailbox_threads t WHERE t.mailbox_id = m.id) AS total,
               (SELECT count(*) FROM mta.mailbox_threads t
                 WHERE t.mailbox_id = m.id AND t.unread > 0) AS unread
          FROM mta.mailboxes m WHERE m.address_id = %s
        """,
        (address_id,),
    )
    return {r["id"]: (int(r["total"]), int(r["unread"])) for r in rows}


async def ids(conn: Conn, address_id: str) -> set[str]:
    rows = await fetch_all(
        conn, "SELECT id::text FROM mta.mailboxes WHERE address_id = %s", (address_id,)
    )
    return {r["id"] for r in rows}


async def exists(conn: Conn, address_id: str, mailbox_id: str) -> bool:
    found = await fetch_val(
        conn,
        "SELECT 1 FROM mta.mailboxes WHERE id::text = %s AND address_id = %s",
        (mailbox_id, address_id),
    )
    return found is not None


async def sibling_named(
    conn: Conn, address_id: str, parent_id: str | None, name: str, other_than: str | None
) -> str | None:
    """The id of a mailbox under ``parent_id`` named ``name`` (any case), not ``other_than``."""
    return await fetch_val(
        conn,
        """
        SELECT id::text FROM mta.mailboxes WHERE address_id = %s
           AND parent_id IS NOT DISTINCT FROM %s::uuid AND lower(name) = lower(%s)
           AND id::text IS DISTINCT FROM %s
        """,
        (address_id, parent_id, name, other_than),
    )


async def parent_of(conn: Conn, mailbox_id: str) -> str | None:
    return await fetch_val(
        conn, "SELECT parent_id::text FROM mta.mailboxes WHERE id::text = %s", (mailbox_id,)
    )


async def with_role(conn: Conn, address_id: str, role: str) -> str | None:
    return await fetch_val(
        conn,
        "SELECT id::text FROM mta.mailboxes WHERE address_id = %s AND role = %s",
        (address_id, role),
    )


async def create(
    conn: Conn,
    address_id: str,
    *,
    parent_id: str | None,
    name: str,
    role: str | None,
    sort_order: int,
    is_subscribed: bool,
    now: datetime,
) -> str:
    """A new mailbox (checked by the caller) and its change; its id."""
    row = await fetch_one(
        conn,
        """
        INSERT INTO mta.mailboxes (address_id, parent_id, name, role, sort_order, is_subscribed,
                                   created_at)
        VALUES (%s, %s, %s, %s, %s, %s, %s)
        RETURNING id::text AS id
        """,
        (address_id, parent_id, name, role, sort_order, is_subscribed, now),
    )
    assert row is not None
    await changes.record(conn, address_id, "Mailbox", [row["id"]], "created", now)
    return str(row["id"])


async def lock(conn: Conn, address_id: str, mailbox_id: str) -> Place | None:
    """The mailbox's place, its row locked for the transaction (None: not the address's)."""
    row = await fetch_one(
        conn,
        """
        SELECT id::text AS id, name, parent_id::text AS parent_id, role FROM mta.mailboxes
         WHERE id::text = %s AND address_id = %s FOR UPDATE
        """,
        (mailbox_id, address_id),
    )
    return Place.from_optional(row)


# The columns update() may set.
UPDATABLE = ("name", "parent_id", "role", "sort_order", "is_subscribed")


async def update(
    conn: Conn, address_id: str, mailbox_id: str, values: dict[str, Any], now: datetime
) -> None:
    """Set ``values`` (columns of UPDATABLE, checked by the caller) and log the change."""
    if set(values) - set(UPDATABLE):
        raise ValueError(f"not updatable: {sorted(set(values) - set(UPDATABLE))}")
    assignments = ", ".join(f"{c} = %s" for c in values)
    await execute(
        conn,
        f"UPDATE mta.mailboxes SET {assignments} WHERE id::text = %s",
        (*values.values(), mailbox_id),
    )
    await changes.record(conn, address_id, "Mailbox", [mailbox_id], "updated", now)


async def lock_contents(conn: Conn, address_id: str, mailbox_id: str) -> Contents | None:
    """Its email count and whether it has children, its row locked (None: not found)."""
    row = await fetch_one(
        conn,
        """
        SELECT m.id::text AS id, m.total_emails,
               EXISTS (SELECT 1 FROM mta.mailboxes c WHERE c.parent_id = m.id) AS has_child
          FROM mta.mailboxes m WHERE m.id::text = %s AND m.address_id = %s FOR UPDATE
        """,
        (mailbox_id, address_id),
    )
    return Contents.from_optional(row)


async def destroy(conn: Conn, address_id: str, mailbox_id: str, now: datetime) -> None:
    """Delete a mailbox the caller emptied (its memberships go by cascade) and log it."""
    await execute(conn, "DELETE FROM mta.mailboxes WHERE id::text = %s", (mailbox_id,))
    await changes.record(conn, address_id, "Mailbox", [mailbox_id], "destroyed", now)


async def depth_order(conn: Conn, mailbox_ids: list[str]) -> list[str]:
    """``mailbox_ids`` deepest first (children before their parents)."""
    if not mailbox_ids:
        return []
    rows = await fetch_all(
        conn,
        """
        WITH RECURSIVE up(id, start, depth) AS (
            SELECT m.parent_id, m.id, 1 FROM mta.mailboxes m WHERE m.id::text = ANY(%s)
            UNION ALL
            SELECT m.parent_id, up.start, up.depth + 1 FROM up JOIN mta.mailboxes m ON m.id = up.id
        )
        SELECT start::text AS id, max(depth) AS depth FROM up GROUP BY start
        """,
        (mailbox_ids,),
    )
    depth = {r["id"]: r["depth"] for r in rows}
    return sorted(dict.fromkeys(mailbox_ids), key=lambda i: -depth.get(i, 0))
