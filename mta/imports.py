"""Mail imported from elsewhere (a transfer from another IMAP server) into a mailbox.

The same path as local delivery (mta/delivery.py) without the SMTP parts:
the raw message is kept as the source had it (no trace fields, no filters,
no SPF/DKIM verdict: it was delivered long ago), small messages inline in
the transaction and large ones in the blob store, fsynced before any row
names them; ``emails.insert`` writes the thread, the row, the memberships
(the triggers count them), the quota usage and the change log in one
statement.

Each import is one transaction that also runs the caller's ``also(conn, duplicate)``
(the transfer's checkpoint), under a per-address advisory lock with the
duplicate check: a message already in the destination (same Message-ID and
size, or the same bytes when it has no Message-ID) is never stored twice,
whatever crash or restart came between.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import datetime

from common.blobs import blob_id_of
from common.db import Conn, execute
from common.runtime import Runtime
from mta.message import parse_message
from mta.store import emails, mailboxes
from mta.store.raw import RawMessages

# The roles a transfer may name as its target folder (mta.store.mailboxes.DEFAULT_MAILBOXES).
ROLES = frozenset(role for _name, role, _order in mailboxes.DEFAULT_MAILBOXES)

# The caller's writes in the import's transaction: (conn, whether it was a duplicate).
Also = Callable[[Conn, bool], Awaitable[None]]


class OverQuota(Exception):
    """The message does not fit in the destination's quota."""


@dataclass(frozen=True)
class Imported:
    email_id: str | None  # None: a duplicate, nothing stored
    duplicate: bool


@dataclass(frozen=True)
class Target:
    """Where an imported message goes: a mailbox by id (from :meth:`Importer.resolve`),
    else a role's folder, else the folder at ``path`` (made when missing)."""

    role: str | None = None
    path: str | None = None
    mailbox_id: str | None = None


class Importer:
    """Stores imported messages; built once per process over the runtime's database."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime
        self.blobs = RawMessages.of(runtime)

    async def resolve(self, address_id: str, target: Target) -> Target:
        """The target as a mailbox id, its folders made now: once per source folder,
        not once per message."""
        async with self.runtime.db.transaction() as conn:
            box = await _target(conn, address_id, target, self.runtime.clock.now())
        return Target(role=target.role, path=target.path, mailbox_id=box)

    async def has(self, address_id: str, message_id: str, size: int) -> bool:
        """Whether the destination holds this message already (Message-ID and size):
        a transfer asks before downloading it, and skips the download."""
        async with self.runtime.db.connection() as conn:
            found = await emails.import_check(
                conn, address_id, message_id=message_id, size=size, blob_id=None, mailbox_id=None
            )
        return found.duplicate

    async def store(
        self,
        address_id: str,
        target: Target,
        raw: bytes,
        *,
        keywords: Sequence[str],
        received_at: datetime,
        quota_bytes: int | None,
        also: Also | None = None,
    ) -> Imported:
        now = self.runtime.clock.now()
        parsed = parse_message(raw)
        size = len(raw)
        inline = self.blobs.inline(size)
        blob_id = blob_id_of(raw)
        async with self.runtime.db.transaction() as conn:
            # One importer per address at a time: the duplicate check and the
            # insert below must see each other.
            await execute(conn, "SELECT pg_advisory_xact_lock(hashtext(%s))", (address_id,))
            found = await emails.import_check(
                conn,
                address_id,
                message_id=parsed.message_id,
                size=size,
                blob_id=blob_id,
                mailbox_id=target.mailbox_id,
            )
            if found.duplicate:
                if also is not None:
                    await also(conn, True)
                return Imported(None, duplicate=True)
            if quota_bytes and int(found.used or 0) + size > quota_bytes:
                raise OverQuota(f"the destination is over its quota of {quota_bytes} bytes")
            box = found.box or await _target(conn, address_id, target, now)
            if inline:
                await self.blobs.put_inline(conn, raw, now)
            else:
                # Large: fsynced in the blob store before a row names it (a crash
                # in between leaves an unreferenced blob that collection frees).
                await self.blobs.put(raw)
            email_id = await emails.insert(
                conn,
                emails.NewEmail(
                    address_id=address_id,
                    blob_id=blob_id,
                    size=size,
                    received_at=received_at,
                    parsed=parsed,
                    mailbox_ids=[box],
                    keywords=list(keywords),
                ),
                now,
            )
            if also is not None:
                await also(conn, False)
        return Imported(email_id, duplicate=False)


def message_id_of(head: bytes) -> str | None:
    """The Message-ID the store would record for a message with this header block."""
    return parse_message(head).message_id


async def _target(conn: Conn, address_id: str, target: Target, now: datetime) -> str:
    # (A resolved folder deleted meanwhile is made again from the role or path.)
    if target.role is not None:
        roles = await mailboxes.ensure_defaults(conn, address_id, now)
        if target.role in roles:
            return roles[target.role]
    return await mailboxes.create_path(conn, address_id, target.path or "Inbox", now)
