"""ManageSieve commands in, responses out (RFC 5804 4, its formal syntax).

A command is a line of atoms, quoted strings (``"..."`` with ``\\`` escapes,
at most 1024 octets) and literals (``{n+}`` or ``{n}``, then CRLF and n
octets, after which the command line goes on). A literal over the largest
script (mta/sieve/compiler.py MAX_SCRIPT_BYTES), or literals adding up past
one script and a few lines, are refused before they are read; a NUL anywhere, a quoted string with a CR or LF, or an unterminated
string is a syntax error.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from mta.access.listener import Connection
from mta.sieve.compiler import MAX_SCRIPT_BYTES

MAX_LINE = 8192
MAX_QUOTED = 1024
# Literals a command may carry in all (PUTSCRIPT has one script).
MAX_LITERAL = MAX_SCRIPT_BYTES
_LITERAL = re.compile(rb"\{(\d{1,10})(\+?)\}$")
_ATOM = re.compile(rb"[A-Za-z0-9_.\-]+")


class BadCommand(Exception):
    pass


class LiteralTooLarge(Exception):
    def __init__(self, size: int) -> None:
        super().__init__(size)
        self.size = size


@dataclass(frozen=True)
class Atom:
    value: str


Token = Atom | str  # an atom, or a string (quoted or literal)


@dataclass(frozen=True)
class Command:
    verb: str
    args: list[Token]

    def strings(self) -> list[str] | None:
        """The arguments if every one is a string (quoted or literal)."""
        if any(isinstance(a, Atom) for a in self.args):
            return None
        return [a for a in self.args if isinstance(a, str)]


async def read_command(conn: Connection, within: float) -> Command:
    """One command, its literals read as they come; raises :class:`BadCommand`,
    :class:`LiteralTooLarge` (the connection must close: the bytes are coming),
    or the connection's Closed and LineTooLong."""
    tokens: list[Token] = []
    line = await conn.readline(within)
    # What one command may hold in all: its largest literal and a few lines
    # (many literals, each under the limit, must not add up without end).
    left = MAX_LITERAL + 4 * MAX_LINE - len(line)
    while True:
        literal = _LITERAL.search(line)
        head = line[: literal.start()] if literal else line
        tokens += _tokens(head)
        if literal is None:
            break
        size = int(literal.group(1))
        left -= size
        if size > MAX_LITERAL or left < 0:
            raise LiteralTooLarge(size)
        data = await conn.read_exactly(size, within)
        if b"\x00" in data:
            raise BadCommand("NUL bytes are not allowed")
        try:
            tokens.append(data.decode("utf-8"))
        except UnicodeDecodeError:
            raise BadCommand("a string is not UTF-8") from None
        line = await conn.readline(within)
        left -= len(line)
    if not tokens or not isinstance(tokens[0], Atom):
        raise BadCommand("a command starts with its name")
    return Command(tokens[0].value.upper(), tokens[1:])


async def read_string(conn: Connection, within: float) -> str | None:
    """A SASL client response (RFC 5804 2.1): one string, quoted or literal, on its
    own line; None when the line holds something else."""
    line = await conn.readline(within)
    literal = _LITERAL.search(line)
    if literal is not None and literal.start() == 0:
        size = int(literal.group(1))
        if size > MAX_QUOTED:
            raise LiteralTooLarge(size)
        data = await conn.read_exactly(size, within)
        if await conn.readline(within):
            return None
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            return None
    tokens = _tokens(line)
    if len(tokens) != 1 or not isinstance(tokens[0], str):
        return None
    return tokens[0]


def _tokens(text: bytes) -> list[Token]:
    if b"\x00" in text:
        raise BadCommand("NUL bytes are not allowed")
    out: list[Token] = []
    at = 0
    while at < len(text):
        ch = text[at : at + 1]
        if ch == b" ":
            at += 1
        elif ch == b'"':
            value = bytearray()
            at += 1
            while True:
                if at >= len(text):
                    raise BadCommand("unterminated string")
                c = text[at : at + 1]
                if c == b"\\":
                    nxt = text[at + 1 : at + 2]
                    if nxt not in (b"\\", b'"'):
                        raise BadCommand("bad escape in a string")
                    value += nxt
                    at += 2
                elif c == b'"':
                    at += 1
                    break
                elif c in (b"\r", b"\n"):
                    raise BadCommand("a quoted string has no line breaks")
                else:
                    value += c
                    at += 1
            if len(value) > MAX_QUOTED:
                raise BadCommand("quoted string too long; send a literal")
            try:
                out.append(value.decode("utf-8"))
            except UnicodeDecodeError:
                raise BadCommand("a string is not UTF-8") from None
        else:
            match = _ATOM.match(text, at)
            if match is None:
                raise BadCommand("syntax error")
            out.append(Atom(match.group().decode("ascii")))
            at = match.end()
    return out


def string(value: str) -> bytes:
    """A string as a response carries it: quoted when it can be, else a literal."""
    raw = value.encode("utf-8")
    if len(raw) <= MAX_QUOTED and not any(c in raw for c in b'\r\n"\\\x00'):
        return b'"' + raw + b'"'
    return b"{%d}\r\n" % len(raw) + raw


def response(kind: str, text: str | None = None, code: str | None = None) -> bytes:
    """``OK``, ``NO`` or ``BYE``, with an optional response code and text."""
    out = kind.encode()
    if code:
        out += b" (" + code.encode() + b")"
    if text is not None:
        out += b" " + string(text)
    return out + b"\r\n"
