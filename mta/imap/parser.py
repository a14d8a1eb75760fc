"""IMAP command syntax (RFC 9051 9, RFC 3501 9): a command is read, then parsed here.

The reader (server.py) turns the wire into a :class:`Command` buffer: the
lines with every literal's bytes spliced in where its ``{n}`` / ``{n+}``
(LITERAL+, RFC 7888) stood, and the offsets of those literals. The
tokenizer walks that buffer into the generic items IMAP's grammar is built
of (atoms, quoted strings, literals, parenthesised lists), and the
functions below read the specific productions from them: sequence sets,
flags, dates, fetch attributes (``BODY.PEEK[HEADER.FIELDS (From)]<0.100>``
is one atom) and search keys.

Everything a client sends that the grammar does not allow raises
:class:`ParseError`, answered ``BAD`` with its message.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta, timezone

# A command's name and tag: ATOM-CHAR (no "+" in a tag).
_ATOM_STOP = frozenset(b' ()"{') | frozenset(range(0, 32)) | {127}
_TAG = re.compile(rb"^[!#$&'*,./0-9:;<=>?@A-Z\[\^_`a-z|}~-]+$")  # ATOM-CHAR but "+", "%"
_LITERAL_AT_END = re.compile(rb"~?\{(\d{1,10})(\+?)\}$")
MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


class ParseError(Exception):
    """The command does not follow the grammar; answered BAD with this text."""


@dataclass
class Command:
    """One command as read: its bytes (literals spliced in) and where each literal is."""

    data: bytearray = field(default_factory=bytearray)
    # offset in data -> length of the literal that starts there
    literals: dict[int, int] = field(default_factory=dict)

    @classmethod
    def of(cls, line: bytes, *literals: bytes) -> Command:
        """A command from its first line and literal bodies (tests, RFC examples):
        each ``{n}`` at the end of a line part is followed by one literal."""
        cmd = cls()
        parts = re.split(rb"(~?\{\d+\+?\}\r\n)", line)
        bodies = iter(literals)
        for part in parts:
            if _LITERAL_AT_END.match(part.rstrip(b"\r\n")) and part.endswith(b"\r\n"):
                cmd.add_literal(next(bodies))
            else:
                cmd.data += part
        return cmd

    def add_literal(self, body: bytes) -> None:
        self.literals[len(self.data)] = len(body)
        self.data += body


def literal_announced(line: bytes) -> tuple[int, bool, bool] | None:
    """(length, non-synchronizing, literal8) when ``line`` (without CRLF) ends in a literal."""
    m = _LITERAL_AT_END.search(line)
    if m is None:
        return None
    return int(m.group(1)), m.group(2) == b"+", m.group(0).startswith(b"~")


def strip_literal(line: bytes) -> bytes:
    """``line`` without its trailing ``{n}`` (the reader splices the bytes in instead)."""
    return _LITERAL_AT_END.sub(b"", line)


# -- generic items ----------------------------------------------------------------


@dataclass(frozen=True)
class Atom:
    value: str

    @property
    def upper(self) -> str:
        return self.value.upper()


@dataclass(frozen=True)
class String:
    """A quoted string or a literal: the bytes as sent."""

    value: bytes
    literal: bool = False

    @property
    def text(self) -> str:
        return self.value.decode("utf-8", "replace")


Item = Atom | String | list  # type: ignore[type-arg]


class Tokens:
    """A cursor over one command's items."""

    def __init__(self, cmd: Command, pos: int = 0) -> None:
        self.cmd = cmd
        self.data = bytes(cmd.data)
        self.pos = pos

    @property
    def at_end(self) -> bool:
        return self.pos >= len(self.data)

    def peek(self) -> int | None:
        return self.data[self.pos] if self.pos < len(self.data) else None

    def sp(self) -> None:
        if self.peek() != 0x20:
            raise ParseError("a space was expected")
        self.pos += 1

    def maybe_sp(self) -> bool:
        if self.peek() == 0x20:
            self.pos += 1
            return True
        return False

    def end(self) -> None:
        if not self.at_end:
            raise ParseError("unexpected text after the command")

    def word(self) -> str:
        """An atom (a command name, a keyword of the grammar)."""
        item = self.item()
        if not isinstance(item, Atom):
            raise ParseError("an atom was expected")
        return item.value

    def item(self) -> Item:
        c = self.peek()
        if c is None:
            raise ParseError("the command ends too soon")
        if self.pos in self.cmd.literals:
            return self._literal()
        if c == 0x28:  # (
            return self._list()
        if c == 0x22:  # "
            return self._quoted()
        if c == 0x7B:  # {
            raise ParseError("a literal must end its line")
        return self._atom()

    def items(self) -> list[Item]:
        """The rest of the command: items separated by single spaces."""
        out: list[Item] = []
        while not self.at_end:
            out.append(self.item())
            if not self.at_end:
                self.sp()
        return out

    def _literal(self) -> String:
        n = self.cmd.literals[self.pos]
        value = self.data[self.pos : self.pos + n]
        self.pos += n
        return String(value, literal=True)

    def _list(self) -> list[Item]:
        self.pos += 1
        out: list[Item] = []
        if self.peek() == 0x29:
            self.pos += 1
            return out
        while True:
            out.append(self.item())
            c = self.peek()
            if c == 0x29:
                self.pos += 1
                return out
            if c == 0x20:
                self.pos += 1
                continue
            raise ParseError("a list is not closed")

    def _quoted(self) -> String:
        self.pos += 1
        out = bytearray()
        data = self.data
        while self.pos < len(data):
            c = data[self.pos]
            if c == 0x22:
                self.pos += 1
                return String(bytes(out))
            if c == 0x5C:  # backslash: only \" and \\ (quoted-specials)
                self.pos += 1
                if self.pos >= len(data) or data[self.pos] not in (0x22, 0x5C):
                    raise ParseError('a backslash in a quoted string escapes only \\ and "')
                c = data[self.pos]
            elif c in (0x0D, 0x0A, 0):
                raise ParseError("a quoted string cannot hold CR, LF or NUL")
            out.append(c)
            self.pos += 1
        raise ParseError("a quoted string is not closed")

    def _atom(self) -> Atom:
        data, start = self.data, self.pos
        depth = 0
        while self.pos < len(data):
            c = data[self.pos]
            if depth:
                # Inside a section: "BODY[HEADER.FIELDS (To From)]" is one item.
                if c == 0x5D:
                    depth -= 1
                elif c in (0x0D, 0x0A, 0):
                    raise ParseError("a control character in a section")
                self.pos += 1
                continue
            if c == 0x5B:
                depth += 1
            elif c in _ATOM_STOP:
                break
            self.pos += 1
        if depth:
            raise ParseError("a section is not closed")
        if self.pos == start:
            raise ParseError("an atom was expected")
        if self.pos < len(data) and data[self.pos] < 32:
            raise ParseError("a control character in the command")
        return Atom(data[start : self.pos].decode("utf-8", "replace"))


def parse_head(cmd: Command) -> tuple[str, str, Tokens]:
    """(tag, command name upper-cased, the cursor after the name) of a command."""
    toks = Tokens(cmd)
    end = toks.data.find(b" ")
    head = toks.data if end < 0 else toks.data[:end]
    if not head or not _TAG.match(head):
        raise ParseError("a command starts with a tag")
    tag = head.decode()
    toks.pos = len(head)
    if toks.at_end:
        raise ParseError("a command name was expected")
    toks.sp()
    name = toks.word().upper()
    return tag, name, toks


def astring(item: Item) -> bytes:
    if isinstance(item, String):
        return item.value
    if isinstance(item, Atom):
        return item.value.encode()
    raise ParseError("a string was expected")


def text_of(item: Item) -> str:
    return astring(item).decode("utf-8", "replace")


# -- sequence sets (RFC 9051 9: sequence-set) -------------------------------------

_SEQ = re.compile(r"^(\d+|\*)(?::(\d+|\*))?$")


@dataclass(frozen=True)
class SequenceSet:
    """Ranges as written; ``*`` is None (the largest number in use)."""

    ranges: tuple[tuple[int | None, int | None], ...]
    saved: bool = False  # "$": the result of the last SEARCH (RFC 9051 6.4.4.1)

    def resolve(self, largest: int) -> Iterator[tuple[int, int]]:
        """Each range as (low, high) with ``*`` replaced by ``largest``."""
        for a, b in self.ranges:
            lo = largest if a is None else a
            hi = largest if b is None else b
            if lo > hi:
                lo, hi = hi, lo
            yield lo, hi

    def contains(self, n: int, largest: int) -> bool:
        return any(lo <= n <= hi for lo, hi in self.resolve(largest))


def sequence_set(text: str) -> SequenceSet:
    if text == "$":
        return SequenceSet((), saved=True)
    ranges: list[tuple[int | None, int | None]] = []
    for part in text.split(","):
        m = _SEQ.match(part)
        if m is None:
            raise ParseError(f"not a sequence set: {text[:40]}")
        values = [None if v == "*" else int(v) for v in m.groups(default=m.group(1))]
        for v in values:
            if v is not None and not 0 < v <= 0xFFFFFFFF:
                raise ParseError("sequence numbers and UIDs are 1 to 4294967295")
        ranges.append((values[0], values[1]))
    return SequenceSet(tuple(ranges))


def format_uid_set(uids: list[int]) -> str:
    """Sorted UIDs as a compact set ("1:3,7")."""
    return format_ordered_set(sorted(uids))


def format_ordered_set(numbers: list[int]) -> str:
    """Numbers as a set in the order given, a run ascending by one as a range:
    "5,1:3,9" for 5 1 2 3 9 (ESORT's ALL keeps the sort order)."""
    out: list[str] = []
    start = prev = None
    for n in numbers:
        if prev is not None and n == prev + 1:
            prev = n
            continue
        if start is not None:
            out.append(str(start) if start == prev else f"{start}:{prev}")
        start = prev = n
    if start is not None:
        out.append(str(start) if start == prev else f"{start}:{prev}")
    return ",".join(out)


# -- flags, dates ------------------------------------------------------------------

SYSTEM_FLAGS = {"\\SEEN", "\\ANSWERED", "\\FLAGGED", "\\DELETED", "\\DRAFT"}
_KEYWORD = re.compile(r"^[!#$&'+\-.0-9:;<=>?@A-Z^_`a-z|~]+$")


def flag_list(item: Item) -> list[str]:
    """A parenthesised flag list, or a single flag (STORE allows both)."""
    items = item if isinstance(item, list) else [item]
    out = []
    for f in items:
        if not isinstance(f, Atom):
            raise ParseError("a flag is an atom")
        v = f.value
        if v.startswith("\\"):
            if v.upper() not in SYSTEM_FLAGS:
                raise ParseError(f"{v} cannot be set")
        elif not _KEYWORD.match(v) or len(v) > 255:
            raise ParseError(f"not a keyword: {v[:40]}")
        out.append(v)
    return out


_DATE_TIME = re.compile(
    r"^([ \d]\d)-([A-Za-z]{3})-(\d{4}) (\d\d):(\d\d):(\d\d) ([+-])(\d\d)(\d\d)$"
)


def date_time(item: Item) -> datetime:
    """APPEND's date-time: "17-Jul-1996 02:44:25 -0700"."""
    m = _DATE_TIME.match(text_of(item))
    if m is None:
        raise ParseError('a date-time is "dd-Mon-yyyy hh:mm:ss +zzzz"')
    day, mon, year, hh, mm, ss, sign, zh, zm = m.groups()
    try:
        month = [x.lower() for x in MONTHS].index(mon.lower()) + 1
        offset = timedelta(hours=int(zh), minutes=int(zm)) * (-1 if sign == "-" else 1)
        return datetime(
            int(year), month, int(day), int(hh), int(mm), int(ss), tzinfo=timezone(offset)
        ).astimezone(UTC)
    except ValueError as exc:
        raise ParseError(f"not a date-time: {exc}") from None


def date(item: Item) -> datetime:
    """SEARCH's date: 1-Feb-1994 (a day, UTC midnight)."""
    text = text_of(item)
    parts = text.split("-")
    try:
        day, mon, year = parts
        month = [x.lower() for x in MONTHS].index(mon.lower()) + 1
        return datetime(int(year), month, int(day), tzinfo=UTC)
    except ValueError:
        raise ParseError(f"not a date: {text[:40]}") from None


def format_date_time(value: datetime) -> str:
    """INTERNALDATE: "17-Jul-1996 02:44:25 +0000"."""
    v = value.astimezone(UTC)
    return f"{v.day:02d}-{MONTHS[v.month - 1]}-{v.year:04d} {v:%H:%M:%S} +0000"


# -- FETCH attributes --------------------------------------------------------------

_SECTION = re.compile(
    r"^(BODY|BODY\.PEEK|BINARY|BINARY\.PEEK|BINARY\.SIZE)\[([^\]]*)\](?:<(\d+)(?:\.(\d+))?>)?$",
    re.IGNORECASE,
)
_PART = re.compile(
    r"^(\d+(?:\.\d+)*)?(?:\.?(HEADER|HEADER\.FIELDS|HEADER\.FIELDS\.NOT|TEXT|MIME))?$"
)
SIMPLE_ATTS = {
    "FLAGS", "INTERNALDATE", "RFC822.SIZE", "ENVELOPE", "BODY", "BODYSTRUCTURE", "UID",
    "MODSEQ", "RFC822", "RFC822.HEADER", "RFC822.TEXT", "EMAILID", "THREADID", "SAVEDATE",
}  # fmt: skip
MACROS = {
    "ALL": ["FLAGS", "INTERNALDATE", "RFC822.SIZE", "ENVELOPE"],
    "FAST": ["FLAGS", "INTERNALDATE", "RFC822.SIZE"],
    "FULL": ["FLAGS", "INTERNALDATE", "RFC822.SIZE", "ENVELOPE", "BODY"],
}


@dataclass(frozen=True)
class Section:
    """One BODY[...] / BINARY[...] item."""

    name: str  # as the response names it: BODY, BINARY, BINARY.SIZE
    peek: bool
    part: tuple[int, ...]
    kind: str  # "", HEADER, HEADER.FIELDS, HEADER.FIELDS.NOT, TEXT, MIME
    fields: tuple[str, ...] = ()
    partial: tuple[int, int | None] | None = None
    spec: str = ""  # the section text to echo

    def label(self) -> str:
        origin = f"<{self.partial[0]}>" if self.partial is not None else ""
        return f"{self.name}[{self.spec}]{origin}"


FetchAtt = str | Section


def fetch_atts(item: Item) -> list[FetchAtt]:
    items = item if isinstance(item, list) else [item]
    if not isinstance(item, list) and isinstance(item, Atom) and item.upper in MACROS:
        return list(MACROS[item.upper])
    out: list[FetchAtt] = []
    for it in items:
        if not isinstance(it, Atom):
            raise ParseError("a fetch attribute is an atom")
        upper = it.upper
        if upper in SIMPLE_ATTS:
            out.append(upper)
            continue
        out.append(section(it.value))
    return out


def section(text: str) -> Section:
    m = _SECTION.match(text)
    if m is None:
        raise ParseError(f"unknown fetch attribute: {text[:40]}")
    name, spec, start, length = m.groups()
    name = name.upper()
    peek = name.endswith(".PEEK")
    base = name.removesuffix(".PEEK")
    fields: tuple[str, ...] = ()
    spec_upper = spec.upper()
    inner = spec_upper
    if "(" in spec:
        head, _, rest = spec.partition(" ")
        if not rest.startswith("(") or not rest.endswith(")"):
            raise ParseError("HEADER.FIELDS takes a list of field names")
        fields = tuple(f.upper() for f in rest[1:-1].split() if f)
        if not fields:
            raise ParseError("HEADER.FIELDS takes at least one field name")
        inner = head.upper()
    pm = _PART.match(inner)
    if pm is None:
        raise ParseError(f"not a section: {spec[:40]}")
    numbers, kind = pm.groups()
    kind = kind or ""
    if kind.startswith("HEADER.FIELDS") != bool(fields):
        raise ParseError("HEADER.FIELDS takes a list of field names")
    part = tuple(int(n) for n in numbers.split(".")) if numbers else ()
    if any(n == 0 for n in part):
        raise ParseError("section parts count from 1")
    if kind == "MIME" and not part:
        raise ParseError("MIME names a part")
    if base.startswith("BINARY") and kind:
        raise ParseError("BINARY takes part numbers only")
    partial = None
    if start is not None:
        partial = (int(start), int(length) if length is not None else None)
        if base == "BINARY.SIZE":
            raise ParseError("BINARY.SIZE takes no partial")
    canonical = spec_upper if not fields else f"{inner} ({' '.join(fields)})"
    return Section(base, peek, part, kind, fields, partial, canonical)


# -- SEARCH keys (RFC 9051 6.4.4) --------------------------------------------------


@dataclass(frozen=True)
class Key:
    """One search key: its name, and its arguments (strings, numbers, dates, sets, keys)."""

    name: str
    args: tuple[object, ...] = ()


_NO_ARG = {
    "ALL", "ANSWERED", "DELETED", "DRAFT", "FLAGGED", "SEEN", "UNANSWERED", "UNDELETED",
    "UNDRAFT", "UNFLAGGED", "UNSEEN", "NEW", "OLD", "RECENT",
}  # fmt: skip
_STRING_ARG = {"BCC", "BODY", "CC", "FROM", "SUBJECT", "TEXT", "TO"}
_DATE_ARG = {"BEFORE", "ON", "SINCE", "SENTBEFORE", "SENTON", "SENTSINCE"}
_NUMBER_ARG = {"LARGER", "SMALLER"}
_FLAG_ARG = {"KEYWORD", "UNKEYWORD"}


def search_keys(items: list[Item]) -> Key:
    """The search program: the keys ANDed (a Key named AND)."""
    it = iter(items)
    keys = []
    for item in it:
        keys.append(_key(item, it))
    if not keys:
        raise ParseError("SEARCH needs a search key")
    return keys[0] if len(keys) == 1 else Key("AND", tuple(keys))


def _next(it: Iterator[Item], name: str) -> Item:
    try:
        return next(it)
    except StopIteration:
        raise ParseError(f"{name} needs an argument") from None


def _key(item: Item, it: Iterator[Item]) -> Key:
    if isinstance(item, list):
        return search_keys(item)
    if isinstance(item, String):
        raise ParseError("a search key was expected")
    name = item.upper
    if name in _NO_ARG:
        return Key(name)
    if name in _STRING_ARG:
        return Key(name, (astring(_next(it, name)),))
    if name in _DATE_ARG:
        return Key(name, (date(_next(it, name)),))
    if name in _NUMBER_ARG:
        value = text_of(_next(it, name))
        if not value.isdigit():
            raise ParseError(f"{name} takes a number")
        return Key(name, (int(value),))
    if name in _FLAG_ARG:
        return Key(name, (flag_list(_next(it, name))[0],))
    if name == "HEADER":
        field_name = text_of(_next(it, name))
        return Key(name, (field_name, astring(_next(it, name))))
    if name == "NOT":
        return Key(name, (_key(_next(it, name), it),))
    if name == "OR":
        return Key(name, (_key(_next(it, name), it), _key(_next(it, name), it)))
    if name == "UID":
        return Key(name, (sequence_set(text_of(_next(it, name))),))
    if name == "MODSEQ":
        # MODSEQ [entry-name entry-type] mod-sequence (RFC 7162 3.1.5)
        value = text_of(_next(it, name))
        if not value.isdigit():
            _next(it, name)
            value = text_of(_next(it, name))
        if not value.isdigit():
            raise ParseError("MODSEQ takes a number")
        return Key(name, (int(value),))
    if name in ("YOUNGER", "OLDER"):
        value = text_of(_next(it, name))
        if not value.isdigit():
            raise ParseError(f"{name} takes seconds")
        return Key(name, (int(value),))
    if re.match(r"^[\d*$][\d*:,]*$", item.value):
        return Key("SEQ", (sequence_set(item.value),))
    raise ParseError(f"unknown search key: {item.value[:40]}")


# -- mailbox names: modified UTF-7 for IMAP4rev1 (RFC 3501 5.1.3) -------------------


def decode_mailbox(name: bytes, utf8: bool) -> str:
    text = name.decode("utf-8", "replace") if utf8 else name.decode("latin-1")
    if utf8:
        return text
    out, i = [], 0
    while i < len(text):
        c = text[i]
        if c != "&":
            out.append(c)
            i += 1
            continue
        end = text.find("-", i)
        if end < 0:
            raise ParseError("a mailbox name's modified UTF-7 is not closed")
        if end == i + 1:
            out.append("&")
        else:
            b64 = text[i + 1 : end].replace(",", "/")
            b64 += "=" * (-len(b64) % 4)
            try:
                out.append(base64.b64decode(b64).decode("utf-16-be"))
            except ValueError:
                raise ParseError("a mailbox name's modified UTF-7 is malformed") from None
        i = end + 1
    return "".join(out)


def encode_mailbox(name: str, utf8: bool) -> str:
    if utf8:
        return name
    out: list[str] = []
    pending: list[str] = []

    def flush() -> None:
        if pending:
            raw = "".join(pending).encode("utf-16-be")
            out.append("&" + base64.b64encode(raw).decode().rstrip("=").replace("/", ",") + "-")
            pending.clear()

    for c in name:
        if 0x20 <= ord(c) <= 0x7E:
            flush()
            out.append("&-" if c == "&" else c)
        else:
            pending.append(c)
    flush()
    return "".join(out)
