"""The IMAP server's store adapter: IMAP operations over the functions JMAP uses.

Folders are JMAP mailboxes (their path, "/" separated, is the IMAP name; the
mailbox with the inbox role is INBOX whatever it is called), flags are JMAP
keywords (responses.py maps them), and every write goes through
mta/store (emails, mailboxes, changes) in one transaction with its change
log rows, so a JMAP client, the webmail and push hear of it at once. UIDs
and MODSEQs: mta/store/imap_uids.py.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from common.db import Conn, transaction
from mta.store import changes, emails, imap_uids, mailboxes

SEPARATOR = mailboxes.SEPARATOR
ROLE_ATTRIBUTES = {
    "drafts": "\\Drafts",
    "sent": "\\Sent",
    "trash": "\\Trash",
    "junk": "\\Junk",
    "archive": "\\Archive",
}


@dataclass(frozen=True)
class Folder:
    id: str
    name: str  # the IMAP name: INBOX, or the path from the top
    role: str | None
    parent_id: str | None
    subscribed: bool
    total: int
    unread: int
    has_children: bool


async def folders(conn: Conn, address_id: str) -> list[Folder]:
    """The address's mailboxes with IMAP names, INBOX first then by name."""
    rows = await mailboxes.listing(conn, address_id)
    by_id = {r.id: r for r in rows}
    parents = {r.parent_id for r in rows if r.parent_id}

    def path(box: mailboxes.Mailbox) -> str:
        if box.role == "inbox":
            return "INBOX"
        parts, seen = [box.name], {box.id}
        parent = box.parent_id
        while parent and parent in by_id and parent not in seen:
            seen.add(parent)
            p = by_id[parent]
            parts.append("INBOX" if p.role == "inbox" else p.name)
            parent = p.parent_id
        return SEPARATOR.join(reversed(parts))

    out = [
        Folder(
            r.id,
            path(r),
            r.role,
            r.parent_id,
            r.is_subscribed,
            r.total_emails,
            r.unread_emails,
            r.id in parents,
        )
        for r in rows
    ]
    return sorted(out, key=lambda f: (f.name != "INBOX", f.name.lower()))


def find(found: Sequence[Folder], name: str) -> Folder | None:
    key = "INBOX" if name.upper() == "INBOX" else name
    if key.upper().startswith("INBOX" + SEPARATOR):
        key = "INBOX" + key[5:]
    for f in found:
        if f.name == key or (f.name.lower() == key.lower()):
            return f
    return None


class Refused(Exception):
    """A NO with this text (and an optional response code)."""

    def __init__(self, text: str, code: str = "") -> None:
        super().__init__(text)
        self.code = code


async def create(conn: Conn, address_id: str, name: str, now: datetime) -> str:
    name = name.rstrip(SEPARATOR)
    async with transaction(conn):
        found = await folders(conn, address_id)
        if find(found, name) is not None:
            raise Refused("the mailbox exists already", "ALREADYEXISTS")
        parts = name.split(SEPARATOR)
        if any(not p.strip() for p in parts) or len(parts) > mailboxes.MAX_DEPTH:
            raise Refused("not a valid mailbox name", "CANNOT")
        parent: Folder | None = None
        made = ""
        for i, part in enumerate(parts):
            path = SEPARATOR.join(parts[: i + 1])
            existing = find(found, path)
            if existing is not None:
                parent = existing
                continue
            made = await mailboxes.create(
                conn,
                address_id,
                parent_id=parent.id if parent else None,
                name=part,
                role=None,
                sort_order=0,
                is_subscribed=True,
                now=now,
            )
            parent = Folder(made, path, None, None, True, 0, 0, False)
        return made


async def delete(conn: Conn, address_id: str, name: str, now: datetime) -> None:
    """DELETE: a mailbox without children and without a role; its mail goes with it
    (mail in no other mailbox is destroyed, as IMAP servers do)."""
    async with transaction(conn):
        box = find(await folders(conn, address_id), name)
        if box is None:
            raise Refused("no such mailbox", "NONEXISTENT")
        if box.role is not None:
            raise Refused("this special mailbox stays", "CANNOT")
        contents = await mailboxes.lock_contents(conn, address_id, box.id)
        if contents is None:
            raise Refused("no such mailbox", "NONEXISTENT")
        if contents.has_child:
            raise Refused("the mailbox has children; delete them first", "INUSE")
        members = await emails.members(conn, box.id)
        await emails.destroy_emails(
            conn, address_id, [m.id for m in members if not m.elsewhere], now
        )
        await mailboxes.destroy(conn, address_id, box.id, now)


async def rename(conn: Conn, address_id: str, old: str, new: str, now: datetime) -> None:
    async with transaction(conn):
        found = await folders(conn, address_id)
        box = find(found, old)
        if box is None:
            raise Refused("no such mailbox", "NONEXISTENT")
        if find(found, new) is not None:
            raise Refused("the new name exists already", "ALREADYEXISTS")
        if box.role == "inbox":
            # RFC 9051 6.3.6: renaming INBOX moves its mail; kept simple: refused.
            raise Refused("INBOX cannot be renamed here", "CANNOT")
        parent_path, _, leaf = new.rstrip(SEPARATOR).rpartition(SEPARATOR)
        parent_id = None
        if parent_path:
            parent = find(found, parent_path)
            parent_id = (
                parent.id
                if parent is not None
                else await create(conn, address_id, parent_path, now)
            )
            if parent_id == box.id:
                raise Refused("a mailbox cannot go inside itself", "CANNOT")
        if not leaf.strip():
            raise Refused("not a valid mailbox name", "CANNOT")
        await mailboxes.update(
            conn, address_id, box.id, {"name": leaf, "parent_id": parent_id}, now
        )


async def subscribe(conn: Conn, address_id: str, name: str, on: bool, now: datetime) -> None:
    async with transaction(conn):
        box = find(await folders(conn, address_id), name)
        if box is None:
            if on:
                raise Refused("no such mailbox", "NONEXISTENT")
            return
        await mailboxes.update(conn, address_id, box.id, {"is_subscribed": on}, now)


# -- a selected mailbox ------------------------------------------------------------


@dataclass
class View:
    """What a session knows of its selected mailbox: UIDs (ascending) and email ids."""

    mailbox_id: str
    uid_validity: int
    uid_next: int
    uids: list[int]
    email_ids: list[str]
    modseq: int


async def open_view(conn: Conn, address_id: str, mailbox_id: str) -> View:
    # Usually every message has its UID already: one read, no lock, no transaction.
    seen = await imap_uids.snapshot(conn, address_id, mailbox_id)
    if seen is not None:
        state, pairs, modseq = seen.state, seen.uids, seen.modseq
    else:
        async with transaction(conn):
            state = await imap_uids.assign(conn, mailbox_id)
            pairs = await imap_uids.uid_map(conn, mailbox_id)
            modseq = await imap_uids.highest_modseq(conn, address_id, mailbox_id)
    return View(
        mailbox_id,
        state.uid_validity,
        state.uid_next,
        [u for u, _ in pairs],
        [e for _, e in pairs],
        modseq,
    )


@dataclass
class Delta:
    expunged: list[int]  # UIDs gone
    added: list[tuple[int, str]]  # (uid, email id) new
    changed: dict[str, int]  # email id -> modseq, flags changed
    modseq: int
    uid_next: int


async def delta(conn: Conn, address_id: str, view: View) -> Delta:
    """What changed in the mailbox since the view was last brought up to date."""
    if await imap_uids.unchanged(conn, address_id, view.mailbox_id, view.uid_next, view.modseq):
        return Delta([], [], {}, view.modseq, view.uid_next)
    async with transaction(conn):
        modseq = await imap_uids.highest_modseq(conn, address_id, view.mailbox_id)
        state = await imap_uids.assign(conn, view.mailbox_id)
        added: list[tuple[int, str]] = []
        if state.uid_next > view.uid_next:
            pairs = await imap_uids.uid_map(conn, view.mailbox_id, since_uid=view.uid_next)
            added = pairs
        expunged: list[int] = []
        changed: dict[str, int] = {}
        if modseq > view.modseq:
            gone = await imap_uids.vanished_since(conn, view.mailbox_id, view.modseq)
            known = set(view.uids)
            expunged = [u for u in gone if u in known]
            changed = await imap_uids.changed_since(conn, address_id, view.modseq) or {}
    return Delta(expunged, added, changed, max(modseq, view.modseq), state.uid_next)


async def set_flags(
    conn: Conn,
    address_id: str,
    email_ids: Sequence[str],
    mode: str,
    keywords: Sequence[str],
    now: datetime,
    *,
    unchanged_since: int | None = None,
) -> tuple[dict[str, list[str]], list[str]]:
    """STORE: (email id -> keywords after, for every email asked; ids refused by
    UNCHANGEDSINCE). ``mode`` is "+", "-" or "" (replace)."""
    after: dict[str, list[str]] = {}
    refused: list[str] = []
    async with transaction(conn):
        rows = await emails.lock_flags(conn, address_id, list(email_ids))
        seqs = (
            await imap_uids.modseqs(conn, address_id, [r.id for r in rows])
            if unchanged_since is not None
            else {}
        )
        changed_emails: list[str] = []
        boxes: set[str] = set()
        wanted = set(keywords)
        for row in rows:
            old = set(row.keywords)
            if unchanged_since is not None and seqs.get(row.id, 0) > unchanged_since:
                refused.append(row.id)
                after[row.id] = sorted(old)
                continue
            new = old | wanted if mode == "+" else old - wanted if mode == "-" else set(wanted)
            after[row.id] = sorted(new)
            if new == old:
                continue
            await emails.set_keywords(conn, row.id, sorted(new))
            changed_emails.append(row.id)
            if ("$seen" in new) != ("$seen" in old):
                boxes |= set(row.mailbox_ids)
        await changes.record(conn, address_id, "Email", changed_emails, "updated", now)
        await changes.record(conn, address_id, "Mailbox", sorted(boxes), "updated", now)
    return after, refused


async def copy(
    conn: Conn,
    address_id: str,
    source_id: str,
    target_id: str,
    email_ids: Sequence[str],
    now: datetime,
    *,
    move: bool,
) -> tuple[int, dict[str, int]]:
    """COPY / MOVE: the email joins the target mailbox (one email, several
    mailboxes, as JMAP keeps it); MOVE also leaves the source. (target
    UIDVALIDITY, email id -> UID in the target)."""
    async with transaction(conn):
        rows = await emails.lock_flags(conn, address_id, list(email_ids))
        changed: list[str] = []
        for row in rows:
            if target_id not in row.mailbox_ids:
                await emails.join_mailboxes(conn, row.id, [target_id])
                changed.append(row.id)
            if move and source_id != target_id and source_id in row.mailbox_ids:
                await emails.leave_mailboxes(conn, row.id, [source_id])
                if row.id not in changed:
                    changed.append(row.id)
        await changes.record(conn, address_id, "Email", changed, "updated", now)
        boxes = [target_id, source_id] if move else [target_id]
        await changes.record(conn, address_id, "Mailbox", boxes if changed else [], "updated", now)
        state = await imap_uids.assign(conn, target_id)
        uids = await imap_uids.uids_of(conn, target_id, [r.id for r in rows])
    return state.uid_validity, uids


async def expunge(
    conn: Conn, address_id: str, mailbox_id: str, email_ids: Sequence[str], now: datetime
) -> list[str]:
    """The emails leave the mailbox; one in no other mailbox is destroyed. The ids gone."""
    gone: list[str] = []
    async with transaction(conn):
        rows = await emails.lock_flags(conn, address_id, list(email_ids))
        destroy = [r.id for r in rows if set(r.mailbox_ids) <= {mailbox_id}]
        leaving = [r for r in rows if mailbox_id in r.mailbox_ids and r.id not in destroy]
        for row in leaving:
            await emails.leave_mailboxes(conn, row.id, [mailbox_id])
            # Deleted here only: it stays in its other mailboxes as it was.
            if "$deleted" in row.keywords:
                await emails.set_keywords(
                    conn, row.id, [k for k in row.keywords if k != "$deleted"]
                )
            gone.append(row.id)
        await changes.record(conn, address_id, "Email", [r.id for r in leaving], "updated", now)
        await changes.record(
            conn, address_id, "Mailbox", [mailbox_id] if leaving else [], "updated", now
        )
        gone += await emails.destroy_emails(conn, address_id, destroy, now)
    return gone
