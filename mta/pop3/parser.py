"""POP3 command lines in, replies out (RFC 1939 3, RFC 2449 3 and 8, RFC 3206).

A command is a keyword of three or four letters and its arguments, separated
by single spaces. PASS takes the rest of the line as the password (RFC 1939 7
lets a server keep its spaces). A NUL byte, bytes that are not UTF-8, or a
keyword that is not letters are each a syntax error.
"""

from __future__ import annotations

from dataclasses import dataclass

# RFC 2449 4 caps a command at 255 octets; SASL responses (RFC 5034 4) and
# long passwords need more. Past this the connection is closed.
MAX_LINE = 8192

# RFC 3206 / RFC 2449 8 response codes.
AUTH = "AUTH"
SYS_TEMP = "SYS/TEMP"
SYS_PERM = "SYS/PERM"


class BadCommand(Exception):
    pass


@dataclass(frozen=True)
class Command:
    verb: str
    args: list[str]
    # Everything after the keyword and its space (PASS's password, AUTH's response).
    rest: str


def parse(line: bytes) -> Command:
    if b"\x00" in line:
        raise BadCommand("NUL bytes are not allowed")
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError:
        raise BadCommand("the command is not UTF-8") from None
    verb, _, rest = text.partition(" ")
    if not verb.isascii() or not verb.isalpha() or not 3 <= len(verb) <= 4:
        raise BadCommand("unknown command")
    return Command(verb=verb.upper(), args=rest.split(" ") if rest else [], rest=rest)


def ok(text: str = "") -> bytes:
    return f"+OK {text}\r\n".encode() if text else b"+OK\r\n"


def err(text: str, code: str | None = None) -> bytes:
    return (f"-ERR [{code}] {text}\r\n" if code else f"-ERR {text}\r\n").encode()


def multiline(first: str, lines: list[str]) -> bytes:
    """A multi-line reply (RFC 1939 3): the lines dot-stuffed, then ``.``."""
    body = "".join(("." + line if line.startswith(".") else line) + "\r\n" for line in lines)
    return f"+OK {first}\r\n{body}.\r\n".encode()


def number(arg: str) -> int | None:
    """A message number (1-based); None for anything else."""
    if not arg.isascii() or not arg.isdigit() or len(arg) > 9:
        return None
    value = int(arg)
    return value if value >= 1 else None


class DotStuffer:
    """A message as a multi-line reply, chunk by chunk (RFC 1939 3).

    A line starting with ``.`` gets one more; the message is closed with a
    line end (added when its last line had none) and ``.``."""

    def __init__(self) -> None:
        self.at_line_start = True

    def feed(self, chunk: bytes) -> bytes:
        if not chunk:
            return b""
        out = chunk.replace(b"\n.", b"\n..")
        if self.at_line_start and chunk.startswith(b"."):
            out = b"." + out
        self.at_line_start = chunk.endswith(b"\n")
        return out

    def end(self) -> bytes:
        return b".\r\n" if self.at_line_start else b"\r\n.\r\n"


def top_part(head: bytearray, lines: int) -> int | None:
    """Where TOP's answer ends in ``head`` (the header, the blank line and ``lines``
    body lines), or None when more of the message is needed to know."""
    end = head.find(b"\r\n\r\n")
    sep = 4
    if end < 0:
        end, sep = head.find(b"\n\n"), 2
    if end < 0:
        return None
    at = end + sep
    for _ in range(lines):
        nl = head.find(b"\n", at)
        if nl < 0:
            return None
        at = nl + 1
    return at
