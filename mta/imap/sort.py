"""SORT (RFC 5256 3, with RFC 5957's DISPLAYFROM and DISPLAYTO) and the base
subject both SORT and THREAD compare (RFC 5256 2.1).

The keys come from the columns the store keeps for JMAP, only those SORT
and THREAD compare (mta/store/imap_uids.py ``sort_keys``: the dates as
epoch seconds, size, subject, the first From/To/Cc address's name and
addr-spec, the message ids): one query per batch, no message parsed. The subject column is already
RFC 2047-decoded and unfolded (step 1 of 2.1). Strings compare with
i;ascii-casemap (ASCII letters folded to upper case, then octet by octet of
UTF-8); ties, and every key equal, fall back to the sequence number.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from mta.imap.parser import Atom, Item, ParseError

KEYS = {"ARRIVAL", "CC", "DATE", "FROM", "SIZE", "SUBJECT", "TO", "DISPLAYFROM", "DISPLAYTO"}


# The first address of a field: (display name, addr-spec), empty strings when absent.
Address = tuple[str, str]
NOBODY: Address = ("", "")


@dataclass(slots=True)
class Message:
    """What SORT and THREAD know of one message of the result."""

    seq: int
    uid: int
    arrival: float  # INTERNALDATE, seconds since the epoch
    sent: float  # the Date: field; INTERNALDATE when it is missing or bad
    size: int
    subject: str
    sender: Address = NOBODY
    to: Address = NOBODY
    cc: Address = NOBODY
    message_id: str | None = None
    in_reply_to: Sequence[str] = ()
    references: Sequence[str] = ()

    @classmethod
    def of(cls, seq: int, uid: int, row: dict[str, Any]) -> Message:
        """From a row of mta/store/imap_uids.py ``sort_keys``."""
        return cls(
            seq=seq,
            uid=uid,
            arrival=row["arrival"],
            sent=row["sent"],
            size=row["size"],
            subject=row["subject"] or "",
            sender=(row["from_name"] or "", row["from_email"] or ""),
            to=(row["to_name"] or "", row["to_email"] or ""),
            cc=(row["cc_name"] or "", row["cc_email"] or ""),
            message_id=row.get("message_id"),
            in_reply_to=row.get("in_reply_to") or (),
            references=row.get("references") or (),
        )


@dataclass(frozen=True)
class Criterion:
    key: str
    reverse: bool = False


def criteria(item: Item) -> list[Criterion]:
    """The parenthesised sort criteria: ``(REVERSE DATE SUBJECT)``."""
    if not isinstance(item, list) or not item:
        raise ParseError("SORT needs its criteria in parentheses")
    out: list[Criterion] = []
    reverse = False
    for word in item:
        if not isinstance(word, Atom):
            raise ParseError("a sort key is an atom")
        name = word.upper
        if name == "REVERSE":
            if reverse:
                raise ParseError("REVERSE REVERSE")
            reverse = True
            continue
        if name not in KEYS:
            raise ParseError(f"unknown sort key {word.value}")
        out.append(Criterion(name, reverse))
        reverse = False
    if reverse or not out:
        raise ParseError("REVERSE must precede a sort key")
    return out


def casemap(text: str) -> bytes:
    """i;ascii-casemap's form (RFC 4790 9.2): ASCII letters upper-cased, UTF-8 octets."""
    return text.encode("utf-8").upper()


def _mailbox(address: Address) -> str:
    """RFC 5256's addr-mailbox of the first address: its local part."""
    email = address[1]
    return email.rpartition("@")[0] if "@" in email else email


def _display(address: Address) -> str:
    """RFC 5957: the first address's decoded display name, else its addr-spec."""
    return address[0] or address[1]


def _value(message: Message, key: str) -> Any:
    if key == "ARRIVAL":
        return message.arrival
    if key == "DATE":
        return message.sent
    if key == "SIZE":
        return message.size
    if key == "SUBJECT":
        return casemap(base_subject(message.subject)[0])
    if key in ("FROM", "TO", "CC"):
        address = {"FROM": message.sender, "TO": message.to, "CC": message.cc}[key]
        return casemap(_mailbox(address))
    return casemap(_display(message.sender if key == "DISPLAYFROM" else message.to))


def ordered(messages: Sequence[Message], by: Sequence[Criterion]) -> list[Message]:
    """The messages in the order the criteria give: Python's sort is stable, so
    sorting by the last key first and the first key last orders by all of
    them, each in its own direction, with the sequence number under all."""
    out = sorted(messages, key=lambda m: m.seq)
    for criterion in reversed(by):
        out.sort(key=lambda m, k=criterion.key: _value(m, k), reverse=criterion.reverse)  # type: ignore[misc]
    return out


# -- the base subject (RFC 5256 2.1) --------------------------------------------------

_WSP = re.compile(r"[ \t\r\n]+")
_TRAILER = re.compile(r"(?:[ \t]|\(fwd\))+$", re.IGNORECASE)
# subj-blob: "[" *BLOBCHAR "]" *WSP, BLOBCHAR anything but "[" and "]"
_BLOB = r"\[[^\[\]]*\][ \t]*"
# subj-refwd: ("re" / ("fw" ["d"])) *WSP [subj-blob] ":"
_REFWD = re.compile(r"(?:" + _BLOB + r")*(?:re|fwd?)[ \t]*(?:" + _BLOB + r")?:", re.IGNORECASE)
_LEADING_BLOB = re.compile(_BLOB)


@lru_cache(maxsize=16384)
def base_subject(subject: str) -> tuple[str, bool]:
    """The base subject and whether the subject marked a reply or forward.
    (Cached: THREAD asks again for each top it compares, and a mailbox repeats
    its subjects.)"""
    # (1) the column is decoded already; runs of white space become one space.
    text = _WSP.sub(" ", subject)
    marked = False
    while True:
        # (2) trailing "(fwd)" and white space.
        trimmed = _TRAILER.sub("", text)
        if trimmed != text:
            marked = marked or "(fwd)" in text[len(trimmed) :].lower()
            text = trimmed
        # (3)-(5) leaders, then a blob that leaves something, until neither matches.
        while True:
            before = text
            text = text.lstrip(" \t")
            while (leader := _REFWD.match(text)) is not None:
                text = text[leader.end() :].lstrip(" \t")
                marked = True
            blob = _LEADING_BLOB.match(text)
            if blob is not None and text[blob.end() :].strip(" \t"):
                text = text[blob.end() :]
            if text == before:
                break
        # (6) "[fwd: ...]" around the whole: unwrap and start again at (2).
        if len(text) >= 6 and text[:5].lower() == "[fwd:" and text.endswith("]"):
            text = text[5:-1]
            marked = True
            continue
        return text, marked
