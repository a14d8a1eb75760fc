"""How IMAP data is written: strings, lists, flags (RFC 9051 4, 7).

A string goes out quoted when it is short printable ASCII, else as a literal
(``{n}`` CRLF bytes), so any header value, name or body is sent exactly.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

_QUOTABLE = frozenset(range(0x20, 0x7F))
# A byte a quoted string cannot carry as itself (CTL, 8-bit): send a literal.
_UNQUOTABLE = re.compile(rb"[^\x20-\x7e]")
# Printable ASCII with no quote or backslash: quoted as it is (most values).
_PLAIN = re.compile(rb"[\x20\x21\x23-\x5b\x5d-\x7e]{0,1023}")

# IMAP flag <-> JMAP keyword (RFC 8621 4.1.1): the system flags by name; any
# other keyword as itself, lower-cased as JMAP keeps keywords. \Deleted is
# kept as the keyword $deleted (RFC 8621 leaves \Deleted to IMAP alone; a
# JMAP client sees it and may clear it).
FLAG_TO_KEYWORD = {
    "\\SEEN": "$seen",
    "\\ANSWERED": "$answered",
    "\\FLAGGED": "$flagged",
    "\\DRAFT": "$draft",
    "\\DELETED": "$deleted",
}
KEYWORD_TO_FLAG = {
    "$seen": "\\Seen",
    "$answered": "\\Answered",
    "$flagged": "\\Flagged",
    "$draft": "\\Draft",
    "$deleted": "\\Deleted",
    "$forwarded": "$Forwarded",
    "$junk": "$Junk",
    "$notjunk": "$NotJunk",
    "$mdnsent": "$MDNSent",
    "$phishing": "$Phishing",
}
PERMANENT_FLAGS = "(\\Answered \\Flagged \\Deleted \\Seen \\Draft $Forwarded $Junk $NotJunk \\*)"
FLAGS = "(\\Answered \\Flagged \\Deleted \\Seen \\Draft $Forwarded $Junk $NotJunk)"


def keyword_of(flag: str) -> str:
    return FLAG_TO_KEYWORD.get(flag.upper(), flag.lower())


def flags_of(keywords: Iterable[str]) -> str:
    return "(" + " ".join(KEYWORD_TO_FLAG.get(k, k) for k in sorted(keywords)) + ")"


def string(value: str | bytes) -> bytes:
    data = value.encode("utf-8") if isinstance(value, str) else value
    if _PLAIN.fullmatch(data):
        return b'"' + data + b'"'
    if len(data) < 1024 and not _UNQUOTABLE.search(data):
        return b'"' + data.replace(b"\\", b"\\\\").replace(b'"', b'\\"') + b'"'
    return b"{%d}\r\n" % len(data) + data


def nstring(value: str | bytes | None) -> bytes:
    return b"NIL" if value is None else string(value)


def astring(value: str) -> bytes:
    """A mailbox name or the like: an atom when it may be one, else a string."""
    data = value.encode("utf-8")
    if data and all(c in _QUOTABLE and c not in b' (){%*"\\]' for c in data):
        return data
    return string(data)


def plist(items: Iterable[bytes]) -> bytes:
    return b"(" + b" ".join(items) + b")"
