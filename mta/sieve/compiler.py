"""Compiling a Sieve script: sievelib parses, we refuse what we cannot run.

Supported: RFC 5228 (if/elsif/else, keep, discard, redirect, stop, the
header/address/envelope/exists/size/allof/anyof/not/true/false tests),
fileinto, envelope, body (RFC 5173), copy (RFC 3894), imap4flags (RFC 5232)
and mailbox (RFC 5490, ``fileinto :create``). Everything else (reject,
vacation, notify, variables, date...) is a compile error naming its line, so a
script never saves that would silently do nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from sievelib.commands import Command
from sievelib.parser import Parser

SUPPORTED_EXTENSIONS = frozenset({"fileinto", "envelope", "body", "copy", "imap4flags", "mailbox"})
SUPPORTED_COMMANDS = frozenset(
    {
        "require", "if", "elsif", "else", "keep", "discard", "redirect", "stop", "fileinto",
        "setflag", "addflag", "removeflag",
        "header", "address", "envelope", "exists", "size", "allof", "anyof", "not", "true",
        "false", "body", "hasflag",
    }
)  # fmt: skip
MAX_SCRIPT_BYTES = 65536
_LINE = re.compile(r"^line (\d+): (.*)$", re.DOTALL)


class SieveError(Exception):
    """A script that does not compile; ``line`` is 1-based (0 when unknown)."""

    def __init__(self, line: int, message: str) -> None:
        super().__init__(f"line {line}: {message}" if line else message)
        self.line = line
        self.message = message


@dataclass(frozen=True)
class Script:
    commands: list[Command]
    extensions: frozenset[str]


def compile_script(text: str) -> Script:
    """Parse and check ``text``; raise :class:`SieveError` with a line number."""
    raw = text.encode("utf-8")
    if len(raw) > MAX_SCRIPT_BYTES:
        raise SieveError(0, f"script is larger than {MAX_SCRIPT_BYTES} bytes")
    parser = Parser()
    if not parser.parse(raw):
        match = _LINE.match(parser.error or "")
        if match:
            raise SieveError(int(match.group(1)), match.group(2).removeprefix("parsing error: "))
        raise SieveError(0, parser.error or "syntax error")
    extensions: set[str] = set()
    for command in parser.result:
        for node in command.walk():
            if node.name not in SUPPORTED_COMMANDS:
                raise SieveError(_line_of(text, node.name), f"{node.name} is not supported here")
            if node.name == "require":
                for ext in _strings(node.arguments["capabilities"]):
                    if ext not in SUPPORTED_EXTENSIONS:
                        raise SieveError(
                            _line_of(text, f'"{ext}"'), f"extension {ext} is not supported here"
                        )
                    extensions.add(ext)
    return Script(commands=list(parser.result), extensions=frozenset(extensions))


def _strings(value: object) -> list[str]:
    items = value if isinstance(value, list) else [value]
    return [str(v).strip('"') for v in items]


def _line_of(text: str, word: str) -> int:
    # sievelib keeps no positions on parsed commands; the first line naming it is right
    # for the usual one-mistake script.
    for number, line in enumerate(text.splitlines(), start=1):
        if re.search(rf"(?<![\w\"]){re.escape(word)}(?![\w])", line):
            return number
    return 0
