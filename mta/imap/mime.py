"""A message's MIME tree as byte ranges of the message as stored (RFC 2045,
RFC 2046), for FETCH's BODYSTRUCTURE and body sections (RFC 9051 6.4.5, 7.5.2).

Each part knows where its header starts, where its body starts and where it
ends, so a section is a slice of the stored bytes (what a client checking an
S/MIME or PGP signature over a forwarded message needs), and the sizes and
line counts BODYSTRUCTURE gives are those of the bytes a client then
fetches. Python's email package would not do: it serialises a part again
(``as_bytes()`` refolds headers and rewrites line ends and 8-bit bytes) and
holds a message/rfc822 part as a multipart of one message.

Parts are found as Dovecot's message parser finds them (the peer the tests
compare with, tests/mta/imap/test_forwarded.py):

- A boundary line starts with ``--`` and the boundary of an open multipart,
  whatever follows it (RFC 2046 5.1.1: the boundary need not be the whole
  line); when boundaries of several open multiparts match, the longest wins,
  the innermost on a tie; ``--`` right after it closes that multipart.
- The line break before a boundary line belongs to the boundary: the part
  before it ends without it.
- A boundary of an enclosing multipart ends every part inside it (a close
  delimiter that never came), a header included: the header is cut there
  and the part's body is empty.
- After a close delimiter, what comes before the enclosing boundary (or the
  end) is the multipart's epilogue, part of its body.
- A part without Content-Type is text/plain, or message/rfc822 directly in
  a multipart/digest (RFC 2046 5.1.5).
- A header ends at its first empty line (CRLF or a lone LF); a line without
  a colon stays in the header; a header without an empty line runs to the end.
- A message/rfc822 (or, as RFC 9051 says, message/global) part holds one
  part, the message inside, whose header and body are the part's body.
- Past 100 nested multipart or message parts (Dovecot's limit), a part's
  body is not looked into: it is text/plain. The 10,000th part (Dovecot's
  limit too) is text/plain and runs to the end of the message.

Only the headers are parsed (into compat32 Messages, for Content-Type's
parameters and the like); bodies are skipped by ``bytes.find`` for a line
starting with ``--``, so a large attachment costs a C-speed search, not a
line-by-line parse.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from email.message import Message

# Encapsulated messages: RFC 9051 7.5.2 shows both with an ENVELOPE.
MESSAGE_TYPES = frozenset({"message/rfc822", "message/global"})

MAX_DEPTH = 100
MAX_PARTS = 10_000

# The line break ending a header's last line and the empty line after it.
_BLANK = re.compile(rb"\n\r?\n")
# A header field with its folded continuation lines: the name (white space
# before the colon left out, as Dovecot reads it) and the value as it came
# (the stdlib's compat32 reading: white space after the colon left out, the
# folds kept). A line without a colon matches nothing and is skipped.
_FIELD = re.compile(
    r"^([^\s:][^:\r\n]*?)[ \t]*:[ \t]*([^\r\n]*(?:\r?\n[ \t][^\r\n]*)*)", re.MULTILINE
)


@dataclass(slots=True, eq=False)
class Part:
    """One part: its header is ``raw[start:body]`` (with its empty line), its
    body ``raw[body:end]``. ``content_type`` is what it is read as (lower
    case, defaults applied); ``children`` the parts of a multipart, or the
    one message inside a message/rfc822 part."""

    start: int
    body: int
    end: int
    fields: Message
    content_type: str
    children: list[Part] = field(default_factory=list)

    @property
    def is_multipart(self) -> bool:
        return self.content_type.startswith("multipart/")

    @property
    def is_message(self) -> bool:
        return self.content_type in MESSAGE_TYPES


def fields_of(header: bytes) -> Message:
    """A header block's fields as a compat32 Message (8-bit bytes kept as
    surrogates, as the stdlib's bytes parser keeps them)."""
    msg = Message()
    for name, value in _FIELD.findall(header.decode("ascii", "surrogateescape")):
        msg.set_raw(name, value)
    return msg


def walk(raw: bytes) -> Part:
    """The MIME tree of a whole message."""
    return _Walker(raw).entity(0, (), "text/plain", 0)[0]


def find(root: Part, numbers: tuple[int, ...]) -> Part | None:
    """The part a section's part numbers name (RFC 9051 6.4.5), as Dovecot
    finds it: a multipart's n-th part; part 1 of anything else is itself (the
    body of a message that is not multipart, a leaf's own body), and a
    number after it goes into a message/rfc822 part's message: its parts
    when it is multipart, else (1 alone) its body. None: no such part."""
    part = root
    last = len(numbers) - 1
    for i, n in enumerate(numbers):
        more = i < last
        if part.is_multipart:
            if not 0 < n <= len(part.children):
                return None
            part = part.children[n - 1]
        elif n != 1 or (more and not part.is_message):
            return None
        if more and part.is_message:
            part = part.children[0]
    return part


# A boundary line found: (its offset, which open boundary, whether it closes);
# at the end of the message (len(raw), -1, False).
_Stop = tuple[int, int, bool]


class _Walker:
    def __init__(self, raw: bytes) -> None:
        self.raw = raw
        self.count = 0

    def entity(
        self, pos: int, stack: tuple[bytes, ...], default: str, depth: int
    ) -> tuple[Part, _Stop]:
        """The part starting at ``pos`` (a header, then a body) and the boundary
        line that ends it. ``stack``: the open multiparts' boundaries, outermost
        first."""
        raw = self.raw
        self.count += 1
        if raw.startswith(b"\n", pos):
            blank, body = pos, pos + 1
        elif raw.startswith(b"\r\n", pos):
            blank, body = pos, pos + 2
        else:
            m = _BLANK.search(raw, pos)
            blank, body = (m.start() + 1, m.end()) if m else (len(raw), len(raw))
        stop = self.boundary(pos, stack, blank)
        if stop[0] < blank:
            # A boundary inside the header: the header ends before its line break.
            return self.cut(pos, stack, default, stop)
        fields = fields_of(raw[pos:blank])
        if default != "text/plain":
            fields.set_default_type(default)
        ctype = fields.get_content_type()
        over = depth >= MAX_DEPTH or self.count >= MAX_PARTS
        if ctype.startswith("multipart/") and not over:
            boundary = fields.get_boundary()
            if boundary:
                return self.multipart(pos, body, fields, ctype, stack, boundary, depth)
        elif ctype in MESSAGE_TYPES and not over:
            inner, stop = self.entity(body, stack, "text/plain", depth + 1)
            return Part(pos, body, inner.end, fields, ctype, [inner]), stop
        elif over and (ctype.startswith("multipart/") or ctype in MESSAGE_TYPES):
            ctype = "text/plain"
        stop = self.boundary(body, stack)
        return Part(pos, body, self.end(stop, body), fields, ctype), stop

    def multipart(
        self,
        pos: int,
        body: int,
        fields: Message,
        ctype: str,
        stack: tuple[bytes, ...],
        boundary: str,
        depth: int,
    ) -> tuple[Part, _Stop]:
        own = len(stack)
        inner = (*stack, boundary.encode("utf-8", "surrogateescape"))
        default = "message/rfc822" if ctype == "multipart/digest" else "text/plain"
        children = []
        stop = self.boundary(body, inner)  # past the preamble
        while stop[1] == own and not stop[2]:
            child, stop = self.entity(self.next_line(stop[0]), inner, default, depth + 1)
            children.append(child)
        if stop[1] == own:
            # Closed: the epilogue runs to the next enclosing boundary (a line
            # break right after the close delimiter is the delimiter's).
            epilogue = self.next_line(stop[0])
            stop = self.boundary(epilogue, stack)
            end = self.end(stop, epilogue)
        else:
            # Cut short by an enclosing boundary (or the end): where its last part ends.
            end = children[-1].end if children else self.end(stop, body)
        return Part(pos, body, end, fields, ctype, children), stop

    def cut(
        self, pos: int, stack: tuple[bytes, ...], default: str, stop: _Stop
    ) -> tuple[Part, _Stop]:
        """A part whose header a boundary line cuts short: no body, no parts
        (a message/rfc822 part holds an empty message)."""
        end = self.end(stop, pos)
        fields = fields_of(self.raw[pos:end])
        if default != "text/plain":
            fields.set_default_type(default)
        ctype = fields.get_content_type()
        children = [Part(end, end, end, Message(), "text/plain")] if ctype in MESSAGE_TYPES else []
        return Part(pos, end, end, fields, ctype, children), stop

    def boundary(self, pos: int, stack: tuple[bytes, ...], limit: int = -1) -> _Stop:
        """The first boundary line of ``stack`` at or after ``pos`` (a line start)
        that starts before ``limit``."""
        raw = self.raw
        if not stack or self.count >= MAX_PARTS:
            # Past the limit no part begins: the last one runs to the end.
            return len(raw), -1, False
        if limit < 0:
            limit = len(raw)
        if pos < limit and raw.startswith(b"--", pos):
            stop = self.match(pos, stack)
            if stop is not None:
                return stop
        i = raw.find(b"\n--", pos, limit)
        while i >= 0:
            stop = self.match(i + 1, stack)
            if stop is not None:
                return stop
            i = raw.find(b"\n--", i + 1, limit)
        return len(raw), -1, False

    def match(self, line: int, stack: tuple[bytes, ...]) -> _Stop | None:
        """Which open boundary the ``--`` line at ``line`` is: the longest that
        matches, the innermost on a tie."""
        raw = self.raw
        which, size = -1, -1
        for i in range(len(stack) - 1, -1, -1):
            b = stack[i]
            if len(b) > size and raw.startswith(b, line + 2):
                which, size = i, len(b)
        if which < 0:
            return None
        return line, which, raw.startswith(b"--", line + 2 + size)

    def end(self, stop: _Stop, body: int) -> int:
        """Where a body starting at ``body`` ends: at the end of the message, or
        before the line break ahead of the boundary line that follows it."""
        raw = self.raw
        line = stop[0]
        if stop[1] >= 0 and line > body and raw[line - 1] == 0x0A:
            line -= 1
            if line > body and raw[line - 1] == 0x0D:
                line -= 1
        return line

    def next_line(self, line: int) -> int:
        """The start of the line after the one at ``line`` (the end when none)."""
        i = self.raw.find(b"\n", line)
        return len(self.raw) if i < 0 else i + 1
