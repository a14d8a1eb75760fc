"""Emails (JMAP Email, RFC 8621 4): rows over blobs, threads, membership, keywords.

The only module that writes ``mta.emails`` and ``mta.email_mailboxes``: delivery,
imports, JMAP and webmail store, change and destroy mail through the functions
below (threads: mta/store/threads.py; quota: mta/store/quota.py).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from common.db import Conn, Json, Prepared, execute, fetch_all, fetch_one, fetch_val
from common.records import Record
from mta.message import ParsedMessage, search_words
from mta.store import changes, counters, quota, threads

# An email's (and mailbox's, thread's) id as the store writes it: a lower-case uuid.
UUID_TEXT = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


def is_id(value: object) -> bool:
    """Whether ``value`` can name a row (others are simply not found)."""
    return isinstance(value, str) and bool(UUID_TEXT.match(value))


SYSTEM_KEYWORDS = ("$seen", "$flagged", "$answered", "$draft", "$forwarded", "$junk")


@dataclass(frozen=True)
class NewEmail:
    address_id: str
    blob_id: str
    size: int
    received_at: datetime
    parsed: ParsedMessage
    mailbox_ids: Sequence[str]
    keywords: Sequence[str] = ()
    envelope_from: str = ""


def _insert_sql(deferred: bool) -> str:
    # Outside a delivery batch the quota row is written and the body's words
    # indexed with each email (Email/set, Email/import: the user's own mail is
    # searchable at once). Inside one the batch's counts are applied once,
    # right after its COMMIT (mta/store/counters.py), and the words wait in
    # words_backlog for the job: to_tsvector of a 10 KB body is 0.6 ms of
    # PostgreSQL's CPU that no longer comes before the 250.
    usage = "" if deferred else f"{quota.ADD_ONE_CTE},"
    # A batch logs each mailbox's change once, when its counts are applied.
    mailbox_change = (
        ""
        if deferred
        else """
            UNION ALL
            SELECT %(a)s::uuid, 'Mailbox', m, 'updated', %(now)s::timestamptz
              FROM unnest(%(mailboxes)s::text[]::uuid[]) AS m"""
    )
    words = (
        "INSERT INTO mta.words_backlog (email_id, body) SELECT id, %(body)s FROM e"
        if deferred
        else "INSERT INTO mta.email_words (email_id, words)"
        " SELECT id, to_tsvector('simple', %(body)s) FROM e"
    )
    return f"""
        WITH {threads.THREAD_CTES}, e AS (
            INSERT INTO mta.emails
                (address_id, blob_id, thread_id, size, received_at, keywords, message_id,
                 in_reply_to, "references", subject, from_addrs, to_addrs, cc_addrs, sent_at,
                 preview, has_attachment, envelope_from, bcc_addrs)
            VALUES (%(a)s, %(blob)s, (SELECT id FROM thread), %(size)s, %(received)s, %(keywords)s, %(mid)s,
                    %(irt)s, %(refs)s, %(subject)s, %(from)s, %(to)s, %(cc)s, %(sent)s,
                    %(preview)s, %(attach)s, %(env_from)s, %(bcc)s)
            RETURNING id
        ), member AS (
            INSERT INTO mta.email_mailboxes (mailbox_id, email_id, received_at, seen, thread_id)
            SELECT m, (SELECT id FROM e), %(received)s, %(seen)s, (SELECT id FROM thread)
              FROM unnest(%(mailboxes)s::text[]::uuid[]) AS m
        ), words AS (
            {words}
        ), {usage} change AS (
            {changes.INSERT}
            SELECT %(a)s::uuid, 'Email', id, 'created', %(now)s::timestamptz FROM e{mailbox_change}
        )
        SELECT id FROM e
        """


# Prepared: PostgreSQL spent as long planning this statement as running it
# (0.5 ms each), once for every message received.
_INSERT = Prepared(_insert_sql(False))
_INSERT_DEFERRED = Prepared(_insert_sql(True))


async def insert(conn: Conn, new: NewEmail, now: datetime) -> str:
    """Store one email in its mailboxes; the caller holds the transaction.

    The thread, the email row, its memberships (the triggers count them), the
    body's words (or, in a delivery batch, their text queued for the words job),
    the quota usage and the change log entries are written by one statement.
    """
    p = new.parsed
    keywords = sorted({k.lower() for k in new.keywords})
    deferred = counters.deferred_for(conn)
    mailbox_ids = sorted({str(m) for m in new.mailbox_ids})
    if deferred is not None:
        deferred.email_added(new.address_id, mailbox_ids, new.size, "$seen" in keywords, now)
        deferred.words_at = now
    row = await (_INSERT if deferred is None else _INSERT_DEFERRED).fetch_one(
        conn,
        {
            "a": new.address_id,
            "blob": new.blob_id,
            "keys": list(p.thread_keys),
            "size": new.size,
            "received": new.received_at,
            "keywords": keywords,
            "mid": p.message_id,
            "irt": p.in_reply_to,
            "refs": p.references,
            "subject": p.subject,
            "from": Json(p.from_addrs),
            "to": Json(p.to_addrs),
            "cc": Json(p.cc_addrs),
            "sent": p.sent_at,
            "preview": p.preview,
            "attach": p.has_attachment,
            "env_from": new.envelope_from[:320],
            "bcc": Json(p.bcc_addrs),
            "body": search_words(p),
            "seen": "$seen" in keywords,
            # As text[]: a prepared statement's uuid[] parameter takes no text array.
            "mailboxes": mailbox_ids,
            "now": now,
        },
    )
    assert row is not None
    return str(row["id"])


async def in_mailbox(
    conn: Conn, mailbox_id: str, *, limit: int, offset: int = 0
) -> list[dict[str, Any]]:
    """A folder's emails, newest first (served by email_mailboxes_listing)."""
    return await fetch_all(
        conn,
        """
        SELECT e.id, e.blob_id, e.thread_id, e.size, e.received_at, e.keywords, e.message_id,
               e.subject, e.from_addrs, e.to_addrs, e.preview, e.has_attachment
          FROM mta.email_mailboxes em JOIN mta.emails e ON e.id = em.email_id
         WHERE em.mailbox_id = %s
         ORDER BY em.received_at DESC, em.email_id DESC
         LIMIT %s OFFSET %s
        """,
        (mailbox_id, limit, offset),
    )


async def for_address(conn: Conn, address_id: str) -> list[dict[str, Any]]:
    """Every email of an address with its mailbox ids, newest first (tests, exports)."""
    return await fetch_all(
        conn,
        """
        SELECT e.id, e.blob_id, e.thread_id, e.size, e.received_at, e.keywords, e.message_id,
               e.subject, e.from_addrs, e.to_addrs, e.cc_addrs, e.preview, e.envelope_from,
               array(SELECT m.name FROM mta.email_mailboxes em
                       JOIN mta.mailboxes m ON m.id = em.mailbox_id
                      WHERE em.email_id = e.id ORDER BY m.name) AS folders
          FROM mta.emails e WHERE e.address_id = %s
         ORDER BY e.received_at DESC, e.id DESC
        """,
        (address_id,),
    )


async def search(
    conn: Conn, address_id: str, words: str, *, limit: int = 50
) -> list[dict[str, Any]]:
    """Header search (subject, from, to, cc) by words, newest first."""
    return await fetch_all(
        conn,
        """
        SELECT id, subject, from_addrs, received_at FROM mta.emails
         WHERE address_id = %s AND search @@ plainto_tsquery('simple', %s)
         ORDER BY received_at DESC, id DESC LIMIT %s
        """,
        (address_id, words, limit),
    )


# -- what JMAP (and IMAP next) reads and writes ---------------------------------


@dataclass(frozen=True)
class Email(Record):
    """An email's row as a protocol server shows it: ids as text, its mailbox ids, and
    its raw MIME when asked for and kept inline (else None: read it from the blob store)."""

    id: str
    blob_id: str
    thread_id: str
    size: int
    received_at: datetime
    keywords: list[str]
    message_id: str | None
    in_reply_to: list[str]
    references: list[str]
    subject: str
    from_addrs: list[dict[str, str]]
    to_addrs: list[dict[str, str]]
    cc_addrs: list[dict[str, str]]
    bcc_addrs: list[dict[str, str]]
    sent_at: datetime | None
    preview: str
    has_attachment: bool
    mailbox_ids: list[str]
    raw: bytes | None


_EMAIL_SQL = """
    SELECT e.id::text, e.blob_id, e.thread_id::text, e.size, e.received_at, e.keywords,
           e.message_id, e.in_reply_to, e."references", e.subject, e.from_addrs, e.to_addrs,
           e.cc_addrs, e.bcc_addrs, e.sent_at, e.preview, e.has_attachment,
           array(SELECT em.mailbox_id::text FROM mta.email_mailboxes em
                  WHERE em.email_id = e.id) AS mailbox_ids, {raw} AS raw
      FROM mta.emails e
     WHERE e.address_id = %(a)s {where}
"""
_RAW = "(SELECT ib.data FROM mta.inline_blobs ib WHERE ib.blob_id = e.blob_id)"


async def load(
    conn: Conn, address_id: str, ids: Sequence[str] | None, *, with_raw: bool, limit: int = 0
) -> list[Email]:
    """The address's emails among ``ids`` (None: the newest ``limit``)."""
    where = (
        "AND e.id = ANY(%(ids)s::uuid[])"
        if ids is not None
        else "ORDER BY e.received_at DESC LIMIT %(limit)s"
    )
    rows = await fetch_all(
        conn,
        _EMAIL_SQL.format(raw=_RAW if with_raw else "NULL::bytea", where=where),
        {"a": address_id, "ids": list(ids or []), "limit": limit},
    )
    return [Email.from_row(row) for row in rows]


@dataclass(frozen=True)
class Flags(Record):
    """What a change of keywords or mailboxes starts from."""

    id: str
    keywords: list[str]
    mailbox_ids: list[str]


async def lock_flags(conn: Conn, address_id: str, email_ids: Sequence[str]) -> list[Flags]:
    """The keywords and mailboxes of the address's emails among ``email_ids``, rows locked."""
    rows = await fetch_all(
        conn,
        """
        SELECT e.id::text, e.keywords,
               array(SELECT mailbox_id::text FROM mta.email_mailboxes em
                      WHERE em.email_id = e.id) AS mailbox_ids
          FROM mta.emails e
         WHERE e.address_id = %s AND e.id = ANY(%s::uuid[])
         FOR UPDATE
        """,
        (address_id, list(email_ids)),
    )
    return [Flags.from_row(row) for row in rows]


async def set_keywords(conn: Conn, email_id: str, keywords: Sequence[str]) -> None:
    """The email's keywords (the membership trigger moves the unread counts)."""
    await execute(
        conn, "UPDATE mta.emails SET keywords = %s WHERE id = %s", (list(keywords), email_id)
    )


async def leave_mailboxes(conn: Conn, email_id: str, mailbox_ids: Sequence[str]) -> None:
    await execute(
        conn,
        "DELETE FROM mta.email_mailboxes WHERE email_id = %s AND mailbox_id = ANY(%s::uuid[])",
        (email_id, list(mailbox_ids)),
    )


async def join_mailboxes(conn: Conn, email_id: str, mailbox_ids: Sequence[str]) -> None:
    await execute(
        conn,
        """
        INSERT INTO mta.email_mailboxes (mailbox_id, email_id, received_at, seen, thread_id)
        SELECT m, e.id, e.received_at, '$seen' = ANY(e.keywords), e.thread_id
          FROM mta.emails e, unnest(%s::uuid[]) AS m WHERE e.id = %s
        """,
        (list(mailbox_ids), email_id),
    )


async def thread_of(conn: Conn, email_id: str) -> str:
    return str(
        await fetch_val(conn, "SELECT thread_id::text FROM mta.emails WHERE id = %s", (email_id,))
    )


@dataclass(frozen=True)
class Source(Record):
    """An email as a copy (Email/copy) or a submission starts from."""

    id: str
    blob_id: str
    thread_id: str
    keywords: list[str]
    received_at: datetime


async def sources(conn: Conn, address_id: str, email_ids: Sequence[str]) -> list[Source]:
    """The address's emails among ``email_ids`` (ids that are uuids only)."""
    rows = await fetch_all(
        conn,
        """
        SELECT id::text, blob_id, thread_id::text, keywords, received_at FROM mta.emails
         WHERE address_id = %s AND id = ANY(%s::uuid[])
        """,
        (address_id, list(email_ids)),
    )
    return [Source.from_row(row) for row in rows]


async def owns_blob(conn: Conn, address_id: str, blob_id: str) -> bool:
    """Whether one of the address's emails is the message ``blob_id``."""
    return bool(
        await fetch_val(
            conn,
            "SELECT EXISTS (SELECT 1 FROM mta.emails WHERE blob_id = %s AND address_id = %s)",
            (blob_id, address_id),
        )
    )


async def blob_size(conn: Conn, address_id: str, blob_id: str) -> int | None:
    """The size of the message ``blob_id`` if one of the address's emails is it."""
    size = await fetch_val(
        conn,
        "SELECT size FROM mta.emails WHERE address_id = %s AND blob_id = %s LIMIT 1",
        (address_id, blob_id),
    )
    return None if size is None else int(size)


async def in_junk(conn: Conn, email_id: str | None) -> bool:
    """Whether the email was filed in the mailbox with the junk role."""
    row = await fetch_one(
        conn,
        """
        SELECT 1 FROM mta.email_mailboxes em JOIN mta.mailboxes m ON m.id = em.mailbox_id
         WHERE em.email_id = %s AND m.role = 'junk'
        """,
        (email_id,),
    )
    return row is not None


@dataclass(frozen=True)
class MailboxMember(Record):
    id: str
    elsewhere: bool  # also in another mailbox


async def members(conn: Conn, mailbox_id: str) -> list[MailboxMember]:
    """The emails of a mailbox, and whether each is in another mailbox too."""
    rows = await fetch_all(
        conn,
        """
        SELECT em.email_id::text AS id,
               EXISTS (SELECT 1 FROM mta.email_mailboxes o
                        WHERE o.email_id = em.email_id AND o.mailbox_id <> em.mailbox_id) AS elsewhere
          FROM mta.email_mailboxes em WHERE em.mailbox_id = %s::uuid
        """,
        (mailbox_id,),
    )
    return [MailboxMember.from_row(row) for row in rows]


# The queued words of delivered mail into email_words, a batch at a time. The
# email rows are key-share locked first, as a destroy locks them before its
# cascade reaches the backlog: the two never wait on each other in a circle,
# and a row either of them holds is left for the next run.
_INDEX_QUEUED = Prepared(
    """
    WITH b AS (
        DELETE FROM mta.words_backlog w
         USING (SELECT b.email_id FROM mta.words_backlog b JOIN mta.emails e ON e.id = b.email_id
                 WHERE b.body IS NOT NULL
                 LIMIT %(limit)s
                 FOR KEY SHARE OF e SKIP LOCKED FOR UPDATE OF b SKIP LOCKED) picked
         WHERE w.email_id = picked.email_id
        RETURNING w.email_id, w.body
    )
    INSERT INTO mta.email_words (email_id, words)
    SELECT email_id, to_tsvector('simple', body) FROM b
    ON CONFLICT (email_id) DO UPDATE SET words = EXCLUDED.words
    """
)


async def index_queued(conn: Conn, limit: int) -> int:
    """Index up to ``limit`` queued bodies (one statement); how many were done."""
    return await _INDEX_QUEUED.execute(conn, {"limit": limit})


@dataclass(frozen=True)
class Unindexed(Record):
    id: str
    blob_id: str
    data: bytes | None  # the raw MIME when kept inline


async def unindexed(conn: Conn, limit: int) -> list[Unindexed]:
    """Emails queued without their words (stored before migration 0020), newest first."""
    rows = await fetch_all(
        conn,
        """
        SELECT e.id::text, e.blob_id,
               (SELECT ib.data FROM mta.inline_blobs ib WHERE ib.blob_id = e.blob_id) AS data
          FROM mta.words_backlog b JOIN mta.emails e ON e.id = b.email_id
         WHERE b.body IS NULL
         ORDER BY e.received_at DESC LIMIT %s
        """,
        (limit,),
    )
    return [Unindexed.from_row(row) for row in rows]


async def index_body(
    conn: Conn, email_id: str, words: str, bcc_addrs: list[dict[str, str]]
) -> None:
    """The words of an email parsed from its raw message, and its Bcc (older rows lack it)."""
    await execute(
        conn,
        """
        WITH w AS (
            INSERT INTO mta.email_words (email_id, words)
            VALUES (%(id)s, to_tsvector('simple', %(words)s))
            ON CONFLICT (email_id) DO UPDATE SET words = EXCLUDED.words
        ), queued AS (
            DELETE FROM mta.words_backlog WHERE email_id = %(id)s
        )
        UPDATE mta.emails SET bcc_addrs = %(bcc)s WHERE id = %(id)s AND bcc_addrs <> %(bcc)s
        """,
        {"id": email_id, "words": words, "bcc": Json(bcc_addrs)},
    )


@dataclass(frozen=True)
class ImportCheck(Record):
    duplicate: bool  # the address holds this message already
    used: int | None  # its quota usage in bytes
    box: str | None  # the target mailbox, if it still exists


# One round trip before an import: is it there already (Message-ID and size,
# index emails_message_id; without a Message-ID the same bytes, index
# emails_blob), the quota used, and whether the resolved folder still exists.
_CHECK = """
    SELECT EXISTS (SELECT 1 FROM mta.emails WHERE address_id = %(a)s AND {same}) AS duplicate,
           (SELECT used_bytes FROM mta.quota_usage WHERE address_id = %(a)s) AS used,
           (SELECT id::text FROM mta.mailboxes WHERE id = %(box)s::uuid AND address_id = %(a)s)
               AS box
"""
_CHECK_BY_ID = _CHECK.format(same="message_id = %(mid)s AND size = %(size)s")
_CHECK_BY_BYTES = _CHECK.format(same="blob_id = %(blob)s")


async def import_check(
    conn: Conn,
    address_id: str,
    *,
    message_id: str | None,
    size: int,
    blob_id: str | None,
    mailbox_id: str | None,
) -> ImportCheck:
    """Without a Message-ID the same bytes (``blob_id``) make a duplicate."""
    row = await fetch_one(
        conn,
        _CHECK_BY_ID if message_id else _CHECK_BY_BYTES,
        {"a": address_id, "mid": message_id, "size": size, "blob": blob_id, "box": mailbox_id},
    )
    assert row is not None
    return ImportCheck.from_row(row)


@dataclass(frozen=True)
class Listed(Record):
    id: str
    blob_id: str
    size: int


async def oldest_first(conn: Conn, mailbox_id: str) -> list[Listed]:
    """A mailbox's emails, oldest first: what POP3 numbers 1..n (RFC 1939 5)."""
    rows = await fetch_all(
        conn,
        """
        SELECT e.id::text, e.blob_id, e.size
          FROM mta.email_mailboxes em JOIN mta.emails e ON e.id = em.email_id
         WHERE em.mailbox_id = %s::uuid
         ORDER BY em.received_at, em.email_id
        """,
        (mailbox_id,),
    )
    return [Listed.from_row(row) for row in rows]


async def remove_from_mailbox(
    conn: Conn, address_id: str, mailbox_id: str, email_ids: Sequence[str], now: datetime
) -> list[str]:
    """Expunge ``email_ids`` from one mailbox in the caller's transaction; the ids removed.

    An email only in this mailbox is destroyed (:func:`destroy_emails`); one also
    in another mailbox (JMAP lets an email be in several) only leaves this one,
    as JMAP's Mailbox/set onDestroyRemoveEmails does.
    """
    if not email_ids:
        return []
    rows = await fetch_all(
        conn,
        """
        SELECT em.email_id::text AS id,
               EXISTS (SELECT 1 FROM mta.email_mailboxes o
                        WHERE o.email_id = em.email_id AND o.mailbox_id <> em.mailbox_id) AS elsewhere
          FROM mta.email_mailboxes em JOIN mta.emails e ON e.id = em.email_id
         WHERE em.mailbox_id = %s::uuid AND e.address_id = %s AND em.email_id = ANY(%s::uuid[])
         FOR UPDATE OF e
        """,
        (mailbox_id, address_id, list(email_ids)),
    )
    only_here = [r["id"] for r in rows if not r["elsewhere"]]
    moved = [r["id"] for r in rows if r["elsewhere"]]
    destroyed = await destroy_emails(conn, address_id, only_here, now)
    if moved:
        await execute(
            conn,
            "DELETE FROM mta.email_mailboxes WHERE mailbox_id = %s::uuid"
            " AND email_id = ANY(%s::uuid[])",
            (mailbox_id, moved),
        )
        await changes.record(conn, address_id, "Email", moved, "updated", now)
        await changes.record(conn, address_id, "Mailbox", [mailbox_id], "updated", now)
    return destroyed + moved


async def destroy_emails(
    conn: Conn, address_id: str, email_ids: Sequence[str], now: datetime
) -> list[str]:
    """Delete the address's emails among ``email_ids`` (uuids) in the caller's
    transaction; the ids actually destroyed.

    Memberships go by cascade (their trigger keeps the mailbox counts), the
    blob ids become collection candidates (trigger), the quota gives back
    their bytes, each thread they leave is updated, or destroyed when nothing
    is left in it, and the change log hears of every Email, Thread and
    Mailbox touched.
    """
    if not email_ids:
        return []
    rows = await fetch_all(
        conn,
        """
        WITH gone AS (
            SELECT e.id, e.thread_id, e.size,
                   array(SELECT mailbox_id FROM mta.email_mailboxes em WHERE em.email_id = e.id) AS boxes
              FROM mta.emails e
             WHERE e.address_id = %(a)s AND e.id = ANY(%(ids)s::uuid[])
             FOR UPDATE
        ), deleted AS (
            DELETE FROM mta.emails e USING gone WHERE e.id = gone.id RETURNING e.id
        )
        SELECT gone.id::text, gone.thread_id::text, gone.size, gone.boxes::text[] AS boxes
          FROM gone JOIN deleted USING (id)
        """,
        {"a": address_id, "ids": list(email_ids)},
    )
    if not rows:
        return []
    thread_ids = sorted({r["thread_id"] for r in rows})
    gone_threads = await threads.drop_emptied(conn, thread_ids)
    await quota.release(conn, address_id, sum(r["size"] for r in rows), len(rows))
    destroyed = [r["id"] for r in rows]
    boxes = sorted({b for r in rows for b in r["boxes"]})
    await changes.record(conn, address_id, "Email", destroyed, "destroyed", now)
    await changes.record(conn, address_id, "Thread", sorted(gone_threads), "destroyed", now)
    await changes.record(
        conn, address_id, "Thread", [t for t in thread_ids if t not in gone_threads], "updated", now
    )
    await changes.record(conn, address_id, "Mailbox", boxes, "updated", now)
    return destroyed
