"""SEARCH keys evaluated over a mailbox's messages (RFC 9051 6.4.4).

Flags, dates and sizes come from the email rows; FROM/TO/CC/SUBJECT from the
parsed header columns the store keeps (substring, case-insensitive, as
IMAP asks); BCC, HEADER, BODY and TEXT read the message itself, only when
the program names one of them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from email.message import Message

from mta.imap.fetch import parse, split_head
from mta.imap.parser import Key
from mta.imap.responses import keyword_of
from mta.store.imap_uids import MessageRow

RAW_KEYS = {"BCC", "HEADER", "BODY", "TEXT"}


@dataclass
class Candidate:
    seq: int
    uid: int
    row: MessageRow
    raw: bytes | None = None
    modseq: int = 0
    _msg: Message | None = None

    @property
    def msg(self) -> Message:
        if self._msg is None:
            self._msg = parse(self.raw or b"")
        return self._msg


def needs(key: Key, names: set[str]) -> bool:
    if key.name in names:
        return True
    return any(isinstance(a, Key) and needs(a, names) for a in key.args)


def _addrs(values: list[dict[str, str]] | None) -> str:
    return " ".join(f"{a.get('name') or ''} <{a.get('email') or ''}>" for a in values or []).lower()


def _contains(haystack: str, needle: bytes) -> bool:
    return needle.decode("utf-8", "replace").lower() in haystack


def _day(value: datetime | None) -> datetime | None:
    if value is None:
        return None
    return value.replace(hour=0, minute=0, second=0, microsecond=0)


def matcher(
    key: Key, largest_seq: int, largest_uid: int, now: datetime
) -> Callable[[Candidate], bool]:
    name, args = key.name, key.args
    if name == "AND":
        subs = [matcher(k, largest_seq, largest_uid, now) for k in args if isinstance(k, Key)]
        return lambda c: all(m(c) for m in subs)
    if name == "OR":
        a, b = (matcher(k, largest_seq, largest_uid, now) for k in args if isinstance(k, Key))
        return lambda c: a(c) or b(c)
    if name == "NOT":
        inner = matcher(args[0], largest_seq, largest_uid, now)  # type: ignore[arg-type]
        return lambda c: not inner(c)
    if name in ("ALL",):
        return lambda c: True
    flag_keys = {
        "ANSWERED": ("$answered", True), "UNANSWERED": ("$answered", False),
        "DELETED": ("$deleted", True), "UNDELETED": ("$deleted", False),
        "DRAFT": ("$draft", True), "UNDRAFT": ("$draft", False),
        "FLAGGED": ("$flagged", True), "UNFLAGGED": ("$flagged", False),
        "SEEN": ("$seen", True), "UNSEEN": ("$seen", False),
    }  # fmt: skip
    if name in flag_keys:
        kw, present = flag_keys[name]
        return lambda c: (kw in c.row.keywords) == present
    if name in ("KEYWORD", "UNKEYWORD"):
        kw = keyword_of(str(args[0]))
        present = name == "KEYWORD"
        return lambda c: (kw in c.row.keywords) == present
    if name in ("NEW", "RECENT"):
        # \Recent is not kept (RECENT is always 0): nothing is new.
        return lambda c: False
    if name == "OLD":
        return lambda c: True
    if name == "LARGER":
        return lambda c: c.row.size > args[0]  # type: ignore[operator]
    if name == "SMALLER":
        return lambda c: c.row.size < args[0]  # type: ignore[operator]
    if name in ("BEFORE", "ON", "SINCE", "SENTBEFORE", "SENTON", "SENTSINCE"):
        day = args[0]
        assert isinstance(day, datetime)
        column = "sent_at" if name.startswith("SENT") else "received_at"
        test = name.removeprefix("SENT")

        def by_date(c: Candidate) -> bool:
            d = _day(getattr(c.row, column) or c.row.received_at)
            assert d is not None
            d = d.replace(tzinfo=day.tzinfo)
            return d < day if test == "BEFORE" else d == day if test == "ON" else d >= day

        return by_date
    if name in ("YOUNGER", "OLDER"):
        edge = now - timedelta(seconds=int(args[0]))  # type: ignore[call-overload]
        if name == "YOUNGER":
            return lambda c: c.row.received_at >= edge
        return lambda c: c.row.received_at < edge
    if name == "SUBJECT":
        return lambda c: _contains((c.row.subject or "").lower(), args[0])  # type: ignore[arg-type]
    if name in ("FROM", "TO", "CC"):
        column = {"FROM": "from_addrs", "TO": "to_addrs", "CC": "cc_addrs"}[name]
        return lambda c: _contains(_addrs(getattr(c.row, column)), args[0])  # type: ignore[arg-type]
    if name == "BCC":
        return lambda c: _contains(str(c.msg.get("Bcc", "")).lower(), args[0])  # type: ignore[arg-type]
    if name == "HEADER":
        field, value = str(args[0]), args[1]
        assert isinstance(value, bytes)

        def by_header(c: Candidate) -> bool:
            found = c.msg.get_all(field) or []
            return bool(found) and any(_contains(str(v).lower(), value) for v in found)

        return by_header
    if name in ("BODY", "TEXT"):
        needle = args[0]
        assert isinstance(needle, bytes)

        def by_text(c: Candidate) -> bool:
            raw = c.raw or b""
            where = raw if name == "TEXT" else split_head(raw)[1]
            if needle.lower() in where.lower():
                return True
            for part in c.msg.walk():
                if part.get_content_maintype() == "text":
                    payload = part.get_payload(decode=True)
                    if isinstance(payload, bytes):
                        charset = part.get_content_charset() or "utf-8"
                        try:
                            text = payload.decode(charset, "replace")
                        except LookupError:
                            text = payload.decode("utf-8", "replace")
                        if _contains(text.lower(), needle):
                            return True
            return False

        return by_text
    if name == "SEQ":
        seqs = args[0]
        return lambda c: seqs.contains(c.seq, largest_seq)  # type: ignore[attr-defined]
    if name == "UID":
        uids = args[0]
        return lambda c: uids.contains(c.uid, largest_uid)  # type: ignore[attr-defined]
    if name == "MODSEQ":
        return lambda c: c.modseq >= args[0]  # type: ignore[operator]
    return lambda c: False
