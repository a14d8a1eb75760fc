"""IMAP's view of a mailbox: UIDVALIDITY, UIDNEXT, each message's UID, expunged UIDs.

The only module that writes ``mta.imap_mailboxes`` and ``mta.imap_uids``
(migration 0100; the trigger there marks a UID expunged when its membership
leaves, whoever removes it). UIDs are given lazily: :func:`assign` gives each
membership still without one the next UIDs, in (received_at, email_id)
order, under the lock of the mailbox's counter row. Delivery, imports and
JMAP write no UID; the IMAP server calls :func:`assign` before it answers
about a mailbox (SELECT, STATUS, NOOP, IDLE, after APPEND/COPY/MOVE), so a
UID is never given to a message a client could not yet see and UIDs rise in
the order messages become visible.

MODSEQ (RFC 7162) is the JMAP change log's position: a message's is the id of
the latest ``Email`` change naming it, a mailbox's HIGHESTMODSEQ the latest
change of its address (or expunge from it).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, NamedTuple

from common.db import Conn, execute, fetch_all, fetch_one, fetch_rows, fetch_val
from common.records import Record


@dataclass(frozen=True)
class UidState(Record):
    uid_validity: int
    uid_next: int


_ASSIGN = """
    WITH new AS (
        SELECT em.email_id, row_number() OVER (ORDER BY em.received_at, em.email_id) AS n
          FROM mta.email_mailboxes em
         WHERE em.mailbox_id = %(m)s
           AND NOT EXISTS (SELECT 1 FROM mta.imap_uids u
                            WHERE u.mailbox_id = %(m)s AND u.email_id = em.email_id
                              AND u.expunged IS NULL)
    ), ins AS (
        INSERT INTO mta.imap_uids (mailbox_id, uid, email_id)
        SELECT %(m)s, %(next)s + n - 1, email_id FROM new
        RETURNING 1
    )
    UPDATE mta.imap_mailboxes
       SET uid_next = uid_next + (SELECT count(*) FROM ins),
           live = live + (SELECT count(*) FROM ins)
     WHERE mailbox_id = %(m)s
    RETURNING uid_validity, uid_next
"""


async def assign(conn: Conn, mailbox_id: str) -> UidState:
    """UIDs for the mailbox's messages that have none; its UIDVALIDITY and UIDNEXT.

    The caller holds a transaction (the counter row stays locked until it
    commits). One indexed row read when nothing is new: the count of
    messages with a UID is compared with the mailbox's total.
    """
    await execute(
        conn,
        "INSERT INTO mta.imap_mailboxes (mailbox_id) VALUES (%s) ON CONFLICT DO NOTHING",
        (mailbox_id,),
    )
    row = await fetch_one(
        conn,
        """
        SELECT im.uid_validity, im.uid_next, im.live, m.total_emails
          FROM mta.imap_mailboxes im JOIN mta.mailboxes m ON m.id = im.mailbox_id
         WHERE im.mailbox_id = %s
           FOR UPDATE OF im
        """,
        (mailbox_id,),
    )
    assert row is not None
    if row["live"] == row["total_emails"]:
        return UidState(row["uid_validity"], row["uid_next"])
    done = await fetch_one(conn, _ASSIGN, {"m": mailbox_id, "next": row["uid_next"]})
    assert done is not None
    return UidState.from_row(done)


_HIGHEST_MODSEQ = """
    greatest(
        (SELECT max(id) FROM mta.changes WHERE address_id = %(a)s AND type_name = 'Email'),
        (SELECT max(expunged) FROM mta.imap_uids
          WHERE mailbox_id = %(m)s AND expunged IS NOT NULL),
        1)
"""


@dataclass(frozen=True)
class Snapshot:
    """A mailbox as SELECT shows it, read in one statement."""

    state: UidState
    uids: list[tuple[int, str]]  # (uid, email id) by UID
    modseq: int


_STATE = f"""
    SELECT im.uid_validity, im.uid_next, im.live = m.total_emails AS complete,
           ({_HIGHEST_MODSEQ}) AS modseq{{more}}
      FROM mta.imap_mailboxes im JOIN mta.mailboxes m ON m.id = im.mailbox_id
     WHERE im.mailbox_id = %(m)s
"""
_NOW = _STATE.format(more="")
_SNAPSHOT = _STATE.format(
    more=""",
           (SELECT string_agg(uid::text, ',' ORDER BY uid) FROM mta.imap_uids
             WHERE mailbox_id = im.mailbox_id AND expunged IS NULL) AS uids,
           (SELECT string_agg(email_id::text, ',' ORDER BY uid) FROM mta.imap_uids
             WHERE mailbox_id = im.mailbox_id AND expunged IS NULL) AS ids"""
)


async def unchanged(
    conn: Conn, address_id: str, mailbox_id: str, uid_next: int, modseq: int
) -> bool:
    """Whether nothing happened in the mailbox since a session saw UIDNEXT ``uid_next``
    and HIGHESTMODSEQ ``modseq``: no arrival without a UID, no UID given, no change
    logged, no expunge. One read without a lock (what NOOP and every UID command ask)."""
    row = await fetch_one(conn, _NOW, {"a": address_id, "m": mailbox_id})
    return (
        row is not None
        and row["complete"]
        and row["uid_next"] == uid_next
        and int(row["modseq"] or 1) <= modseq
    )


async def snapshot(conn: Conn, address_id: str, mailbox_id: str) -> Snapshot | None:
    """UIDVALIDITY, UIDNEXT, the UID list and HIGHESTMODSEQ in one round trip and
    one consistent read, without a lock, when every message already has its
    UID (the usual SELECT); None when some have none yet (:func:`assign` then)."""
    row = await fetch_one(conn, _SNAPSHOT, {"a": address_id, "m": mailbox_id})
    if row is None or not row["complete"]:
        return None
    return Snapshot(
        UidState(row["uid_validity"], row["uid_next"]),
        _pairs(row["uids"], row["ids"]),
        int(row["modseq"] or 1),
    )


def _pairs(uids: str | None, ids: str | None) -> list[tuple[int, str]]:
    if uids is None or ids is None:
        return []
    return list(zip(map(int, uids.split(",")), ids.split(","), strict=True))


async def uid_map(conn: Conn, mailbox_id: str, *, since_uid: int = 1) -> list[tuple[int, str]]:
    """(uid, email id) of the mailbox's messages with a UID from ``since_uid`` on, by UID."""
    # One row of two strings, split here: a row per message cost more in
    # psycopg2 and Python than the scan (SELECT of 100,000 is 100,000 pairs).
    row = await fetch_one(
        conn,
        """
        SELECT string_agg(uid::text, ',' ORDER BY uid) AS uids,
               string_agg(email_id::text, ',' ORDER BY uid) AS ids
          FROM mta.imap_uids
         WHERE mailbox_id = %s AND uid >= %s AND expunged IS NULL
        """,
        (mailbox_id, since_uid),
    )
    return [] if row is None else _pairs(row["uids"], row["ids"])


async def uids_of(conn: Conn, mailbox_id: str, email_ids: Sequence[str]) -> dict[str, int]:
    """The UIDs of ``email_ids`` in the mailbox (those with one)."""
    rows = await fetch_all(
        conn,
        """
        SELECT email_id::text, uid FROM mta.imap_uids
         WHERE mailbox_id = %s AND email_id = ANY(%s::uuid[]) AND expunged IS NULL
        """,
        (mailbox_id, list(email_ids)),
    )
    return {r["email_id"]: r["uid"] for r in rows}


async def status(conn: Conn, mailbox_id: str) -> UidState | None:
    row = await fetch_one(
        conn,
        "SELECT uid_validity, uid_next FROM mta.imap_mailboxes WHERE mailbox_id = %s",
        (mailbox_id,),
    )
    return None if row is None else UidState.from_row(row)


async def mailbox_size(conn: Conn, mailbox_id: str) -> int:
    """STATUS SIZE (RFC 8438): the octets of the mailbox's messages."""
    value = await fetch_val(
        conn,
        "SELECT coalesce(sum(e.size), 0) FROM mta.email_mailboxes em"
        " JOIN mta.emails e ON e.id = em.email_id WHERE em.mailbox_id = %s",
        (mailbox_id,),
    )
    return int(value or 0)


async def highest_modseq(conn: Conn, address_id: str, mailbox_id: str) -> int:
    """HIGHESTMODSEQ: the address's latest Email change (what flags, arrivals and
    moves log; an index-only backward scan), or a later expunge from the mailbox."""
    value = await fetch_val(conn, f"SELECT {_HIGHEST_MODSEQ}", {"a": address_id, "m": mailbox_id})
    return int(value or 1)


async def modseqs(conn: Conn, address_id: str, email_ids: Sequence[str]) -> dict[str, int]:
    """Each email's MODSEQ: its latest change (1 when the log no longer holds one)."""
    if not email_ids:
        return {}
    rows = await fetch_all(
        conn,
        """
        SELECT object_id::text AS id, max(id) AS modseq FROM mta.changes
         WHERE address_id = %s AND type_name = 'Email' AND object_id = ANY(%s::uuid[])
         GROUP BY object_id
        """,
        (address_id, list(email_ids)),
    )
    found = {r["id"]: int(r["modseq"]) for r in rows}
    floor = await fetch_val(
        conn, "SELECT upto FROM mta.changes_pruned WHERE address_id = %s", (address_id,)
    )
    return {i: found.get(i, int(floor or 1)) for i in email_ids}


async def changed_since(conn: Conn, address_id: str, since: int) -> dict[str, int] | None:
    """Emails changed after ``since`` with their MODSEQ; None when the log was pruned past it."""
    floor = await fetch_val(
        conn, "SELECT upto FROM mta.changes_pruned WHERE address_id = %s", (address_id,)
    )
    if floor is not None and since < int(floor):
        return None
    rows = await fetch_all(
        conn,
        """
        SELECT object_id::text AS id, max(id) AS modseq FROM mta.changes
         WHERE address_id = %s AND type_name = 'Email' AND id > %s
         GROUP BY object_id
        """,
        (address_id, since),
    )
    return {r["id"]: int(r["modseq"]) for r in rows}


async def vanished_since(conn: Conn, mailbox_id: str, since: int) -> list[int]:
    """UIDs expunged from the mailbox after MODSEQ ``since`` (QRESYNC)."""
    rows = await fetch_all(
        conn,
        """
        SELECT uid FROM mta.imap_uids
         WHERE mailbox_id = %s AND expunged IS NOT NULL AND expunged > %s ORDER BY uid
        """,
        (mailbox_id, since),
    )
    return [r["uid"] for r in rows]


async def keywords_in_use(conn: Conn, address_id: str, email_ids: Sequence[str]) -> set[str]:
    """The keywords any of ``email_ids`` has (SELECT's FLAGS), distinct in the database."""
    rows = await fetch_all(
        conn,
        "SELECT DISTINCT unnest(keywords) AS k FROM mta.emails"
        " WHERE address_id = %s AND id = ANY(%s::uuid[])",
        (address_id, list(email_ids)),
    )
    return {r["k"] for r in rows}


async def keywords_by_uid(
    conn: Conn, address_id: str, mailbox_id: str, first: int, last: int
) -> dict[int, list[str]]:
    """UID -> keywords of the mailbox's messages with UIDs ``first`` to ``last``:
    a FLAGS resync's whole read (no id, no blob id: a tenth of a full row's bytes).
    Expunged ones too, as :func:`message_rows` reads them."""
    rows = await fetch_rows(
        conn,
        "SELECT u.uid, e.keywords FROM mta.imap_uids u JOIN mta.emails e ON e.id = u.email_id"
        " WHERE e.address_id = %s AND u.mailbox_id = %s AND u.uid BETWEEN %s AND %s",
        (address_id, mailbox_id, first, last),
    )
    return {uid: keywords for uid, keywords in rows}


# What FETCH reads per email, by need: flags and sizes only; plus the parsed
# header columns (SEARCH); plus the raw header or the whole message
# when kept inline (else the caller reads the blob store); plus the cached
# ENVELOPE and BODYSTRUCTURE (mta/store/imap_cache.py), when the header and
# the message are read only for the emails whose forms are not cached yet.
# Every row has every column (NULL when not asked for), as a named tuple: a
# dict per row cost a FLAGS listing more than the rest of its Python.
class MessageRow(NamedTuple):
    id: str
    keywords: list[str]
    blob_id: str
    received_at: datetime | None
    size: int | None
    thread_id: str | None
    sent_at: datetime | None
    subject: str | None
    from_addrs: list[dict[str, str]] | None
    to_addrs: list[dict[str, str]] | None
    cc_addrs: list[dict[str, str]] | None
    envelope: bytes | None
    bodystructure: bytes | None
    raw: bytes | None


_ROW_COLUMNS = "e.id::text, e.keywords, e.blob_id"
# Parsing a timestamptz per row costs psycopg2 more than the rest of a
# FLAGS-only row: read only when asked for.
_DETAIL_COLUMNS = ("received_at", "size", "thread_id::text")
_HEADER_NAMES = ("sent_at", "subject", "from_addrs", "to_addrs", "cc_addrs")
_INLINE = "(SELECT {what} FROM mta.inline_blobs ib WHERE ib.blob_id = e.blob_id)"
_WHOLE = "ib.data"
_HEAD = "substring(ib.data FROM 1 FOR position('\\x0d0a0d0a'::bytea IN ib.data) + 3)"
_CACHED = ("envelope", "bodystructure")


def _unless(expr: str, cached: Sequence[str]) -> str:
    """``expr`` only where a cached form it would build is missing."""
    if not cached:
        return expr
    missing = " OR ".join(f"c.{n} IS NULL" for n in cached)
    return f"CASE WHEN {missing} THEN {expr} END"


async def message_rows(
    conn: Conn,
    address_id: str,
    email_ids: Sequence[str],
    *,
    with_raw: bool = False,
    with_header: bool = False,
    columns: bool = True,
    cached: Sequence[str] = (),
    only_uncached: bool = True,
    details: bool = True,
    uid_range: tuple[str, int, int] | None = None,
) -> dict[str, MessageRow]:
    """What FETCH and SEARCH show of each email: keywords, dates, size, blob; the
    parsed header columns (``columns``); ``raw``: the whole message (``with_raw``)
    or its header alone (``with_header``) when kept inline, else NULL.

    ``cached``: "envelope" and/or "bodystructure", read from the cache (NULL
    when not rendered yet); with ``only_uncached`` the header columns and
    ``raw`` are read only for the rows missing one of them (what renders it).
    ``details``: received_at, size and thread_id too. ``uid_range`` (mailbox
    id, first UID, last UID): instead of ``email_ids``, the mailbox's messages
    with UIDs in that range, one index range scan with no id list to send.
    """
    missing = [n for n in cached if n in _CACHED] if only_uncached else []
    raw = (
        _unless(_INLINE.format(what=_WHOLE), missing)
        if with_raw
        else _unless(_INLINE.format(what=_HEAD), missing)
        if with_header
        else "NULL::bytea"
    )
    select = [_ROW_COLUMNS]
    select += [f"e.{n}" if details else "NULL" for n in _DETAIL_COLUMNS]
    select += [_unless(f"e.{n}", missing) if columns else "NULL" for n in _HEADER_NAMES]
    select += [f"c.{n}" if n in cached else "NULL::bytea" for n in _CACHED]
    join = " LEFT JOIN mta.imap_cache c ON c.email_id = e.id" if cached else ""
    where, params = _emails(address_id, email_ids, uid_range, join)
    rows = await fetch_rows(conn, f"SELECT {', '.join(select)}, {raw} {where}", params)
    make = MessageRow._make
    return {r[0]: make(r) for r in rows}


def _emails(
    address_id: str,
    email_ids: Sequence[str],
    uid_range: tuple[str, int, int] | None,
    join: str = "",
) -> tuple[str, tuple[Any, ...]]:
    """FROM and WHERE of an address's emails: by id, or (``uid_range``) the
    mailbox's with UIDs in a range, one index range scan and no id list."""
    if uid_range is None:
        return (
            f"FROM mta.emails e{join} WHERE e.address_id = %s AND e.id = ANY(%s::uuid[])",
            (address_id, list(email_ids)),
        )
    return (
        f"FROM mta.imap_uids u JOIN mta.emails e ON e.id = u.email_id{join}"
        " WHERE e.address_id = %s AND u.mailbox_id = %s AND u.uid BETWEEN %s AND %s",
        (address_id, *uid_range),
    )  # expunged ones too: a session not yet told of an expunge still sees the message


# What SORT and THREAD compare (RFC 5256): the dates as epoch seconds (a float
# parses faster than a timestamptz), and of each address field only the first
# address's name and addr-spec, not the JSON list.
_SORT_COLUMNS = (
    "e.id::text, e.size, e.subject,"
    " extract(epoch FROM e.received_at)::float8 AS arrival,"
    " extract(epoch FROM coalesce(e.sent_at, e.received_at))::float8 AS sent,"
    + ",".join(
        f" e.{f}_addrs->0->>'name' AS {f}_name, e.{f}_addrs->0->>'email' AS {f}_email"
        for f in ("from", "to", "cc")
    )
)


# SORT keys PostgreSQL orders by itself (no collation involved): the UIDs
# come back in order and nothing else is read.
SQL_ORDER = {
    "ARRIVAL": "e.received_at",
    "DATE": "coalesce(e.sent_at, e.received_at)",
    "SIZE": "e.size",
}


async def uids_in_order(
    conn: Conn, address_id: str, uid_range: tuple[str, int, int], keys: Sequence[tuple[str, bool]]
) -> list[int]:
    """The UIDs of ``uid_range`` (mailbox id, first, last) ordered by ``keys``
    ((SQL_ORDER name, reversed) pairs), ties by UID."""
    order = ", ".join(f"{SQL_ORDER[k]} {'DESC' if rev else 'ASC'}" for k, rev in keys)
    where, params = _emails(address_id, (), uid_range)
    rows = await fetch_all(conn, f"SELECT u.uid {where} ORDER BY {order}, u.uid", params)
    return [r["uid"] for r in rows]


async def sort_keys(
    conn: Conn,
    address_id: str,
    email_ids: Sequence[str],
    *,
    threading: bool = False,
    uid_range: tuple[str, int, int] | None = None,
) -> dict[str, dict[str, Any]]:
    """Each email's SORT keys (and with ``threading`` its Message-ID,
    In-Reply-To and References, THREAD=REFERENCES's), by email id;
    ``uid_range`` as for :func:`message_rows`."""
    select = _SORT_COLUMNS + (', e.message_id, e.in_reply_to, e."references"' if threading else "")
    where, params = _emails(address_id, email_ids, uid_range)
    rows = await fetch_all(conn, f"SELECT {select} {where}", params)
    return {r["id"]: r for r in rows}
